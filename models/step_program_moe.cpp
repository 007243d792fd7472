#include "models/step_program_moe.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/compressed_attention_ops.hpp"
#include "models/detail/block_offload.hpp"
#include "models/detail/kernel_builder.hpp"
#include "models/detail/moe_exchange_cover.hpp"
#include "models/flops.hpp"
#include "models/layer_ops_host.hpp"
#include "models/linear_attention_ops.hpp"
#include "models/mamba_ops.hpp"
#include "models/memory.hpp"
#include "models/mla_ops.hpp"

namespace clustersim::models {

using topologies::Collective;
using topologies::CollectiveTime;
using topologies::GroupDim;

namespace {

// v4_*: DeepSeek-V4's layers by compress ratio (window only, CSA, HCA).
enum class Attention { standard, mla, sliding, mamba, none, linear, v4_window, v4_csa, v4_hca };
constexpr int kAttentionKinds = 9, kMlpKinds = 3;
// Kinds whose projections and core are one MlaOps (mla_attention_ops, compressed_attention_ops).
bool own_attention_ops(Attention a) { return a == Attention::mla || a >= Attention::v4_window; }

// A recompute module in effect: listed, and recompute still selective (a what-if that turns
// recompute off keeps the list).
bool reruns(const TrainingSpec& t, RecomputeModule m) { return t.recompute == Recompute::selective && t.recomputes(m); }

// The time of the ops of `pass` whose names start with `prefix`.
double time_of_ops(const PassCost& pass, const std::string& prefix) {
  double s = 0;
  for (const KernelOp& op : pass.ops)
    if (op.name.rfind(prefix, 0) == 0) s += op.time_s;
  return s;
}

}  // namespace

RoutedProgram routed_program(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const MoeLayerOps& o,
                             const RoutedExchanges& x, const BlockHostWait& host, const BlockParts& parts) {
  const CollectiveTime &dispatch = x.dispatch, &combine = x.combine, &dispatch_grad = x.dispatch_grad;
  const CollectiveTime &etp_ag = x.etp_ag, &etp_rs = x.etp_rs;
  // Under moe_a2a_overlap (exchange_cover) the share of an exchange that its partner's compute
  // covers runs beside this pass's compute, which does not wait for it (the pass ends when it is
  // done, and the links are shared as usual); the rest is exposed: the next compute waits for it.
  const bool overlap = t.moe_a2a_overlap;
  const ExchangeCover cover = exchange_cover(o, parts);
  auto exchange_item = [&](ProgramWriter& w, const CollectiveTime& c, double covered_s) {
    if (!overlap) return w.comm(c, TaskKind::ep_comm, true, 1);
    const double t_s = c.time.si(), hidden = t_s > 0 ? std::min(1.0, covered_s / t_s) : 1.0;
    if (hidden < 1) w.comm(topologies::share_of(c, 1 - hidden), TaskKind::ep_comm, true, 1);
    if (hidden > 0) w.detached_comm(topologies::share_of(c, hidden), TaskKind::ep_comm, 1);
  };
  auto etp_item = [&](ProgramWriter& w, const CollectiveTime& c) {
    if (overlap) w.detached_comm(c, TaskKind::ep_comm, 0);
    else w.comm(c, TaskKind::ep_comm, true, 1);
  };
  const double permute_f = o.permute_fwd.time_s / 2, permute_b = o.permute_bwd.time_s / 2;
  // The block's host-bound time (moe_host_waits), placed where the forward's sync drains the
  // queue (before the dispatch) and at the start of the backward.
  const double wait_f = host.fwd, wait_b = host.bwd;
  ProgramWriter f, b;
  // recompute_modules: moe reruns the routed MLP's forward (its exchanges too) before its
  // backward; moe_act reruns the experts' activation kernel.
  if (reruns(t, RecomputeModule::moe)) {
    b.compute(o.router_fwd.time_s + permute_f, moe_rerun);
    b.comm(dispatch, TaskKind::ep_comm, true, 1);
    b.compute(o.experts_fwd.time_s, moe_rerun);
    b.comm(combine, TaskKind::ep_comm, true, 1);
    b.compute(permute_f, moe_rerun);
  } else if (reruns(t, RecomputeModule::moe_act)) {
    b.compute(time_of_ops(o.experts_fwd, "experts.act"), moe_rerun);
  }
  f.split();
  f.compute(o.router_fwd.time_s + permute_f + wait_f, moe_router);  // the host sync sits before the dispatch
  exchange_item(f, dispatch, cover.dispatch);
  etp_item(f, etp_ag);
  f.compute(o.experts_fwd.time_s, moe_experts);
  etp_item(f, etp_rs);
  exchange_item(f, combine, cover.combine);
  f.compute(permute_f, moe_unpermute);
  // Split (B and W passes): the experts' and the router's wgrad GEMMs are the W items.
  const bool split = p.splits_backward();
  b.compute(permute_b + wait_b, moe_unpermute);
  exchange_item(b, x.combine_grad, cover.combine_grad);  // the output gradient goes back to the experts
  etp_item(b, etp_ag);
  b.compute(split ? input_grad_s(o.experts_bwd) : o.experts_bwd.time_s, moe_experts);
  etp_item(b, etp_rs);
  exchange_item(b, dispatch_grad, cover.dispatch_grad);
  b.compute(permute_b + (split ? input_grad_s(o.router_bwd) : o.router_bwd.time_s), moe_router);
  ProgramWriter w;
  if (split) w.compute(weight_grad_s(o.experts_bwd), moe_experts), w.compute(weight_grad_s(o.router_bwd), moe_router);
  RoutedProgram r{f.take(), b.take(), w.take(), m.moe.shared_experts > 0};
  return r;
}

namespace {

Attention attention_of(const ModelSpec& m, int layer) {
  const Mixer x = m.layer_kind(layer).mixer;
  if (x == Mixer::linear) return Attention::linear;
  if (x != Mixer::attention) return x == Mixer::mamba ? Attention::mamba : Attention::none;
  if (m.mla.enabled()) return Attention::mla;
  if (m.compressed_attention.enabled())  // v4_window, v4_csa, v4_hca in CompressedKind's order
    return static_cast<Attention>(int(Attention::v4_window) + int(m.compressed_attention.kind_of(layer)));
  return m.sliding_layer(layer) ? Attention::sliding : Attention::standard;
}

// The graph scope that captures a recurrent mixer: Megatron's `mamba` for Mamba layers; a
// linear-attention layer is taken as an attention layer's (`attn`) [E].
GraphScope mixer_scope(Attention a) { return a == Attention::mamba ? GraphScope::mamba : GraphScope::attn; }

// The host wait of one pass of a block without routed experts whose mixer is recurrent (`r`) or
// absent (null), counted as layer_ops.cpp add_host_waits counts the dense block's (its launches
// beyond its GPU time): the input norm and the mixer, captured by mixer_scope, and the MLP part if
// the block has one (mlp).
double own_host_wait(const hardware::GpuSpec& gpu, const TrainingSpec& t, const StepCosts& c, const MambaOps* r,
                     Attention a, bool has_mlp, bool fwd) {
  const auto& parts = fwd ? c.part_fwd : c.part_bwd;
  double kernels = 0, gpu_s = 0;
  auto add = [&](const PassCost& pass, bool captured) {
    gpu_s += pass.time_s - time_of_ops(pass, "host_launch_wait");
    if (!captured)
      for (const KernelOp& op : pass.ops) kernels += op.name == "host_launch_wait" ? 0 : op.kernels;
  };
  const bool mixer_graph = r && t.captures(mixer_scope(a)), mlp_graph = t.captures(GraphScope::mlp);
  kernels += (mixer_graph ? 1 : 0) + (has_mlp && mlp_graph ? 1 : 0);
  if (r) {
    add(parts[norm_attn], mixer_graph);
    for (const PassCost* pass :
         {fwd ? &r->in_fwd : &r->in_bwd, fwd ? &r->core_fwd : &r->core_bwd, fwd ? &r->out_fwd : &r->out_bwd})
      add(*pass, mixer_graph);
  }
  if (has_mlp)
    for (BlockPart x : {norm_mlp, mlp, mlp_up_wgrad}) add(parts[x], mlp_graph);
  return host_wait(gpu, PassCost{}, int(kernels), gpu_s, t).time_s;
}

// The block's compute by part for its attention kind and MLP kind.
BlockParts parts_of(const ModelSpec& m, const TrainingSpec& t, const hardware::GpuSpec& gpu, const StepCosts& c,
                    Attention a, const MlaOps& mla, const MambaOps& recurrent, MlpKind f, const MoeLayerOps* moe) {
  BlockParts b = block_parts(c);
  auto at = [](std::array<double, kBlockParts>& x, BlockPart part) -> double& { return x[static_cast<std::size_t>(part)]; };
  auto set = [&](BlockPart x, const PassCost& fwd, const PassCost& bwd) {
    at(b.fwd, x) = fwd.time_s, at(b.bwd, x) = bwd.time_s;
    at(b.bwd_input, x) = input_grad_s(bwd), at(b.wgrad, x) = weight_grad_s(bwd);
  };
  // The dense block's host wait (layer_ops.cpp add_host_waits, in norm_attn): a block of another
  // kind replaces it with its own (own_host_wait; an MoE block's: moe_host_waits).
  const double dense_f = time_of_ops(c.part_fwd[norm_attn], "host_launch_wait");
  const double dense_b = time_of_ops(c.part_bwd[norm_attn], "host_launch_wait");
  const bool has_mlp = f != MlpKind::none;
  if (a == Attention::mamba || a == Attention::linear) {  // projections + conv, the chunked scan + gated norm, out_proj
    const MambaOps& r = recurrent;
    set(qkv, r.in_fwd, r.in_bwd), set(core, r.core_fwd, r.core_bwd), set(attn_out, r.out_fwd, r.out_bwd);
    set(qkv_wgrad, PassCost{}, PassCost{});
    if (!moe) {
      const double own_f = own_host_wait(gpu, t, c, &r, a, has_mlp, true);
      const double own_b = own_host_wait(gpu, t, c, &r, a, has_mlp, false);
      at(b.fwd, norm_attn) += own_f - dense_f, at(b.bwd, norm_attn) += own_b - dense_b;
      at(b.bwd_input, norm_attn) += own_b - dense_b;
    }
  } else if (a == Attention::none) {  // an MLP-only block: the host wait of its MLP launches (in norm_attn)
    const double wait_f = moe ? dense_f : own_host_wait(gpu, t, c, nullptr, a, has_mlp, true);
    const double wait_b = moe ? dense_b : own_host_wait(gpu, t, c, nullptr, a, has_mlp, false);
    for (BlockPart x : {norm_attn, qkv, core, attn_out, qkv_wgrad}) set(x, PassCost{}, PassCost{});
    at(b.fwd, norm_attn) = wait_f, at(b.bwd, norm_attn) = wait_b, at(b.bwd_input, norm_attn) = wait_b;
    b.has_mixer = false;
  }
  if (f == MlpKind::none) {
    for (BlockPart x : {norm_mlp, mlp, mlp_up_wgrad}) set(x, PassCost{}, PassCost{});
    b.has_mlp = false;
  }
  if (own_attention_ops(a)) {  // the MLA (V4) projections and core replace QKV, core and output projection
    at(b.fwd, qkv) = mla.fwd.time_s, at(b.fwd, core) = 0, at(b.fwd, attn_out) = 0;
    at(b.bwd, qkv) = mla.bwd.time_s, at(b.bwd, core) = 0, at(b.bwd, attn_out) = 0, at(b.bwd, qkv_wgrad) = 0;
    at(b.bwd_input, qkv) = input_grad_s(mla.bwd), at(b.wgrad, qkv) = weight_grad_s(mla.bwd);
    for (BlockPart x : {core, attn_out, qkv_wgrad}) at(b.bwd_input, x) = 0, at(b.wgrad, x) = 0;
    double rerun = 0;  // the up projections (mHC sites) rerun before the backward
    for (const KernelOp& op : mla.fwd.ops) rerun += rerun_before_backward(op.name, t) ? op.time_s : 0.0;
    at(b.bwd, qkv) += rerun, at(b.bwd_input, qkv) += rerun;
  } else if (a == Attention::sliding) {
    // A windowed core takes StepCosts::window_time_* of the full one's time (query tiles keep
    // their fixed cost, layer_ops.cpp window_times); its CP ring steps, the causal key-count
    // ratio (models/flops.cpp).
    const double r = attention_keys_fraction(m.sliding_window.tokens, t.seq_len);
    at(b.fwd, core) *= c.window_time_fwd, at(b.bwd, core) *= c.window_time_bwd, at(b.bwd_input, core) *= c.window_time_bwd;
    b.ring_fwd *= r, b.ring_bwd *= r;
  }
  if (moe) {  // the MLP part is the shared experts; the routed experts follow in their own program
    at(b.fwd, mlp) = moe->shared_fwd.time_s, at(b.bwd, mlp) = moe->shared_bwd.time_s, at(b.bwd, mlp_up_wgrad) = 0;
    at(b.bwd_input, mlp) = input_grad_s(moe->shared_bwd), at(b.wgrad, mlp) = weight_grad_s(moe->shared_bwd);
    at(b.bwd_input, mlp_up_wgrad) = 0, at(b.wgrad, mlp_up_wgrad) = 0;
    // moe_host_waits costs the MoE block's own kernels once: the dense block's wait goes.
    at(b.fwd, norm_attn) -= dense_f, at(b.bwd, norm_attn) -= dense_b, at(b.bwd_input, norm_attn) -= dense_b;
  }
  return b;
}

// MTP module j (DeepSeek-V3 §2.2): RMSNorms of the hidden state and of the next token's
// embedding, the [2h → h] projection, one block of the kind of layer `layers + j`, and the shared
// LM head again; run after the main head on the last stage.
void add_mtp(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu,
             const StepCosts& c, const UnitProgram& block, BlockProgram* prog) {
  const KernelBuilder k = KernelBuilder::training(gpu, t, p);
  const double tokens = double(t.micro_batch) * t.seq_len / p.cp / (p.sequence_parallel ? p.tp : 1);
  PassCost pf, pb;
  pf.add(k.memory("mtp.norms", 4 * tokens * m.hidden * hardware::storage_bytes(t.precision)));
  k.linear(&pf, &pb, "mtp.proj", tokens, m.hidden, 2.0 * m.hidden);
  ProgramWriter f, b, w;
  f.append(prog->head.forward);
  f.compute(pf.time_s);
  f.append(block.forward);
  f.compute(c.head_fwd.time_s);
  // Split (B and W passes): the module's head, block and projection wgrads go to W, in B's order.
  const bool split = p.splits_backward();
  b.compute(split ? input_grad_s(c.head_bwd) : c.head_bwd.time_s);
  b.append(block.backward);
  b.compute((split ? input_grad_s(pb) : pb.time_s) + pf.time_s);
  b.append(prog->head.backward);
  if (split) {
    w.compute(weight_grad_s(c.head_bwd));
    w.append(block.weight_grad);
    w.compute(weight_grad_s(pb));
    w.append(prog->head.weight_grad);
  }
  prog->head = {f.take(), b.take(), w.take()};
}

// What a block of attention kind `a` reruns under selective recompute of core_attn: the dense
// core (`dense`, StepCosts::layer_recompute) for a standard block, its windowed share for a
// sliding one, and for MLA, DSA and DeepSeek-V4 blocks their own core's forward.
double selective_rerun_s(Attention a, const StepCosts& c, const MlaOps& own, double dense) {
  if (a == Attention::sliding) return dense * c.window_time_fwd;
  if (!own_attention_ops(a)) return dense;
  double s = 0;
  for (const KernelOp& op : own.fwd.ops)
    if (attention_core_op(op.name)) s += op.time_s;
  return s;
}

BlockProgram layered_program(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                             const hardware::GpuSpec& gpu, const StepCosts& c, const topologies::Network& net) {
  BlockProgram prog = dense_block_program(t, p, c, net);
  // Selective recompute reruns the attention core only when core_attn is among the modules
  // (Megatron's default set); the other modules' reruns are not timed (their memory is modelled).
  if (!t.recomputes(RecomputeModule::core_attn)) prog.selective_recompute_s = 0;
  if (!m.is_moe() && !m.mla.enabled() && !m.sliding_window.enabled() && m.mtp_layers == 0 && !m.hybrid() &&
      !m.compressed_attention.enabled())
    return prog;
  const TpComms x = tp_comms(p, c, net);
  const MlaOps mla = m.mla.enabled() ? mla_attention_ops(m, t, p, gpu) : MlaOps{};
  const CompressedAttentionKinds v4 =
      m.compressed_attention.enabled() ? compressed_attention_kinds(m, t, p, gpu) : CompressedAttentionKinds{};
  MoeLayerOps moe;
  RoutedExchanges exchanges;
  if (m.is_moe()) {
    moe = moe_layer_ops(m, t, p, expert_parallel(p), gpu, t.moe_load_imbalance);
    exchanges = routed_exchanges(m, t, p, moe, gpu, net);
  }
  const MambaOps mamba = m.mamba.enabled() ? mamba_mixer_ops(m, t, p, gpu) : MambaOps{};
  const MambaOps linear = m.linear_attention.enabled() ? linear_attention_ops(m, t, p, gpu) : MambaOps{};
  const double hybrid_rerun = m.hybrid() ? prog.selective_recompute_s : 0.0;
  if (m.hybrid()) prog.selective_recompute_s = 0;
  // A layer without a mixer: the MoE block's host waits count no attention kernels.
  StepCosts hollow = c;
  for (BlockPart bp : {norm_attn, qkv, core, attn_out, qkv_wgrad}) hollow.part_fwd[bp] = {}, hollow.part_bwd[bp] = {};
  // Kinds by (attention, MLP); blocks[0] stays the dense standard block. An MoE kind's host
  // waits come from its own kernel list (its attention kind included).
  std::vector<int> kind_of(kAttentionKinds * kMlpKinds, -1);
  kind_of[0] = 0;
  auto kind = [&](int layer) {
    const Attention a = attention_of(m, layer);
    const MlpKind f = m.layer_kind(layer).mlp;
    const bool is_moe = f == MlpKind::moe;
    int& k = kind_of[static_cast<std::size_t>(kMlpKinds * int(a) + int(f))];
    if (k < 0) {
      k = int(prog.blocks.size());
      const MambaOps& recurrent = a == Attention::linear ? linear : mamba;
      const MlaOps& own = a == Attention::mla ? mla : v4.of(m, layer);
      const BlockParts parts = parts_of(m, t, gpu, c, a, own, recurrent, f, is_moe ? &moe : nullptr);
      RoutedProgram routed;
      if (is_moe) {
        const bool has_recurrent = a == Attention::mamba || a == Attention::linear;
        const BlockMixer mixer{has_recurrent ? &recurrent : nullptr, mixer_scope(a)};
        const BlockHostWait host = moe_host_waits(t, p, gpu, a == Attention::none ? hollow : c, parts,
                                                  own_attention_ops(a) ? &own : nullptr, mixer, moe, x, exchanges);
        routed = routed_program(m, t, p, moe, exchanges, host, parts);
      }
      UnitProgram unit = transformer_block(p, parts, c, net, x, is_moe ? &routed : nullptr);
      if (m.hybrid() && hybrid_rerun > 0 && (a == Attention::standard || a == Attention::sliding)) {
        ProgramWriter b;  // selective recompute of a hybrid stack reruns the attention layers' cores only
        b.compute(hybrid_rerun * (a == Attention::sliding ? c.window_time_fwd : 1.0), core);
        b.split();
        b.append(unit.backward);
        unit.backward = b.take();
      }
      prog.blocks.push_back(std::move(unit));
      if (!m.hybrid() && prog.selective_recompute_s > 0)  // the kind's own attention core reruns
        prog.set_selective_recompute(k, selective_rerun_s(a, c, own, prog.selective_recompute_s));
    }
    return k;
  };
  prog.block_kind.resize(static_cast<std::size_t>(m.layers));
  for (int l = 0; l < m.layers; ++l) prog.block_kind[static_cast<std::size_t>(l)] = kind(l);
  if (m.mtp_layers > 0 && t.overrides(QuantModule::mtp)) {
    // The MTP modules in their own precision (module_precision): the head of the same stack
    // built in it (the LM head is BF16 in either).
    const TrainingSpec tm = t.for_module(QuantModule::mtp);
    prog.head = layered_program(m, tm, p, gpu, step_costs(m, tm, p, gpu), net).head;
    return prog;
  }
  for (int j = 0; j < m.mtp_layers; ++j) {
    const UnitProgram block = prog.blocks[static_cast<std::size_t>(kind(m.layers + j))];
    add_mtp(m, t, p, gpu, c, block, &prog);
  }
  return prog;
}

// training.bf16_layers: the first and last blocks run the program of the same stack in BF16,
// built from their own costs (models::TrainingSpec::bf16_block), as extra block kinds.
void keep_blocks_bf16(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu,
                      const topologies::Network& net, BlockProgram* prog) {
  if (!t.has_bf16_blocks()) return;
  const TrainingSpec b = t.bf16_block();
  const BlockProgram bf16 = layered_program(m, b, p, gpu, step_costs(m, b, p, gpu), net);
  if (prog->block_kind.empty()) prog->block_kind.assign(static_cast<std::size_t>(m.layers), 0);
  const int offset = int(prog->blocks.size());
  if (!prog->selective_recompute_by_kind.empty() || !bf16.selective_recompute_by_kind.empty())
    for (int k = 0; k < int(bf16.blocks.size()); ++k)
      prog->set_selective_recompute(offset + k, bf16.selective_recompute_of(k));
  prog->blocks.insert(prog->blocks.end(), bf16.blocks.begin(), bf16.blocks.end());
  for (int l = 0; l < m.layers; ++l)
    if (t.layer_in_bf16(l, m.layers)) prog->block_kind[static_cast<std::size_t>(l)] = offset + bf16.block_kind_of(l);
}

}  // namespace

BlockProgram block_program(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                           const hardware::GpuSpec& gpu, const StepCosts& c, const topologies::Network& net) {
  BlockProgram prog = layered_program(m, t, p, gpu, c, net);
  keep_blocks_bf16(m, t, p, gpu, net, &prog);
  offload_activations(m, t, p, gpu, net, &prog);
  if (t.moe_a2a_overlap && m.is_moe()) {
    TrainingSpec alone = t;
    alone.moe_a2a_overlap = false;
    prog.unpaired = std::make_shared<const BlockProgram>(block_program(m, alone, p, gpu, c, net));
  }
  return prog;
}

}  // namespace clustersim::models
