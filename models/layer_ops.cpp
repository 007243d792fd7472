#include "models/layer_ops.hpp"

#include <cmath>

#include "hardware/attention_window.hpp"
#include "models/flops.hpp"
#include "models/layer_ops_host.hpp"
#include "models/detail/layer_ops_recipe.hpp"
#include "models/pipeline.hpp"

namespace clustersim::models {

double weight_grad_s(const PassCost& pass) {
  double s = 0;
  for (const KernelOp& op : pass.ops) s += op.weight_grad ? op.time_s : 0.0;
  return s;
}
double input_grad_s(const PassCost& pass) {
  double s = 0;
  for (const KernelOp& op : pass.ops) s += op.weight_grad ? 0.0 : op.time_s;
  return s;
}
double weight_grad_kept_elements(const PassCost& pass) {
  double n = 0;
  for (const KernelOp& op : pass.ops) n += op.w_kept_elements;
  return n;
}

namespace {

using hardware::GpuSpec;
using hardware::Precision;

struct Builder {
  const GpuSpec& gpu;
  const TrainingSpec& t;
  double micro_batches;  // per step, over which once-a-step weight quantization is spread
  // GPU time the profile's kernel gap overstates per kernel under CUDA graphs.
  double gap_saving = gpu.kernel_gap.si() - kernel_gap_s(gpu, t);

  KernelOp make(std::string name, OpKind kind, double flop, double bytes, hardware::KernelCost c,
                int kernels = 1) const {
    KernelOp op{std::move(name), kind, flop, bytes, c.time.si() - kernels * gap_saving, c.bound, kernels};
    op.grounded_by = c.grounded_by;
    return op;
  }
  // The explainer's ideal kernel: matrix work at the GPU's dense peak for its precision.
  hardware::KernelCost at_peak(double flop, Precision p) const {
    const units::FlopPerSecond peak = gpu.peak(p).si() > 0 ? gpu.peak(p) : gpu.peak(Precision::bf16);
    return {units::Flop(flop) / peak + units::Seconds(gap_saving), hardware::Bound::compute, "peak"};
  }
  KernelOp gemm(std::string name, double m, double n, double k, Precision p) const {
    const double bytes = (m * k + k * n) * hardware::gemm_operand_bytes(p) + m * n * hardware::storage_bytes(p);
    const double flop = 2 * m * n * k;
    return make(std::move(name), OpKind::gemm, flop, bytes,
                t.ideal.gemm ? at_peak(flop, p) : hardware::gemm_cost(gpu, p, m, n, k));
  }
  KernelOp gemm(std::string name, double m, double n, double k) const {
    return gemm(std::move(name), m, n, k, hardware::is_low_precision(t.precision) ? Precision::bf16 : t.precision);
  }
  KernelOp memory(std::string name, double bytes) const {
    const hardware::KernelCost free{units::Seconds(gap_saving), hardware::Bound::memory, "free"};
    return make(std::move(name), OpKind::memory, 0, bytes, t.ideal.memory ? free : hardware::memory_cost(gpu, units::Bytes(bytes)));
  }
  // An element-wise op that eager PyTorch runs as `kernels` separate kernels moving `factor`
  // times the bytes of the fused kernel (each intermediate written and read back in HBM).
  KernelOp unfused(std::string name, double fused_bytes, double factor, int kernels) const {
    return as_kernels(memory(std::move(name), fused_bytes * factor), kernels, gpu, t);
  }
  // A recipe's quantization of `elements` BF16 values, costed as the memory traffic of its
  // kernels at the size-dependent bandwidth (layer_ops_recipe.cpp).
  // One quantizer call from Python; its further kernels come from C++ (loop_launches).
  KernelOp quantize(std::string name, double elements, const QuantPass& q) const {
    const double bytes = elements * q.bytes_per_element;
    auto c = hardware::memory_cost(gpu, units::Bytes(bytes / q.kernels));  // its bound and source
    c.time = quant_time(gpu, q, 1, elements);
    if (t.ideal.quantize) c.time = units::Seconds(q.launches() * gap_saving);
    KernelOp op = make(std::move(name), OpKind::memory, 0, bytes, c, q.launches());
    op.loop_launches = q.launches() - 1;
    return op;
  }
  // Y[m,n] = X[m,k]·W[k,n]: forward GEMM, and backward dgrad (dX = dY·Wᵀ) + wgrad (dW = Xᵀ·dY),
  // for a module of out × in weights (whole, before TP). In low precision the recipe quantizes
  // X before the forward GEMM (both orientations, the transposed copy feeds wgrad), dY before
  // dgrad/wgrad and W once per step (cached across micro-batches, as TE's is_first_microbatch
  // and torchao's weight cache do). `wgrad` may be a separate pass (Megatron overlaps it).
  void linear(PassCost* fwd, PassCost* dgrad, PassCost* wgrad, const std::string& name, double m, double n,
              double k, double module_out, double module_in) const {
    const LinearRecipe r = linear_recipe(t, module_out, module_in);
    if (fwd) {
      if (r.activation.kernels) fwd->add(quantize(name + ".quantize", m * k, r.activation));
      if (r.weight.kernels)
        fwd->add(once_per_step(quantize(name + ".weight_quantize", k * n, r.weight), micro_batches));
      fwd->add(gemm(name, m, n, k, r.gemm));
    }
    if (dgrad) {
      if (r.gradient.kernels) dgrad->add(quantize(name + ".grad_quantize", m * n, r.gradient));
      dgrad->add(gemm(name + ".dgrad", m, k, n, r.gemm));
      (wgrad ? wgrad : dgrad)->add(as_weight_grad(gemm(name + ".wgrad", k, n, m, r.gemm), m, n, k));
    }
  }
};

// The residual add that closes a sub-block, with the bias add and dropout of the sub-block's
// output projection fused in (Megatron bias_dropout_add): read two, write one; dropout also
// writes its 1-byte mask. Backward: nothing without dropout (the gradient passes through) but
// the bias gradient's read of dy; with dropout read dy and the mask, write dx.
struct ResidualBytes {
  double fwd = 0, bwd = 0;
};
ResidualBytes residual_bytes(const ModelSpec& m, double act, double elem_bytes) {
  const double mask = m.dropout > 0 ? act / elem_bytes : 0.0;
  ResidualBytes r;
  r.fwd = 3 * act + mask;
  r.bwd = m.dropout > 0 ? 2 * act + mask : (m.bias ? act : 0.0);
  return r;
}

// The MLP activation on [tokens, f] (`inner` bytes). Gated (SwiGLU, GeGLU): read gate and up,
// write one; backward reads both and the gradient, writes two. Non-gated (GELU, squared ReLU):
// read one, write one; backward reads input and gradient, writes one. Eager PyTorch runs the
// gated ones as act(gate) then * up (10 B against 6 B forward, 16 against 10 backward, 2
// kernels) and squared ReLU as relu then pow (twice the fused bytes, 2 kernels each way,
// Megatron squared_relu); GELU is one kernel.
KernelOp mlp_activation(const Builder& bld, Activation a, double inner, bool eager, bool backward) {
  static constexpr const char* kNames[] = {"gelu", "swiglu", "relu2", "geglu"};
  const std::string name = std::string(kNames[int(a)]) + (backward ? ".bwd" : "");
  if (gated(a)) {
    const double bytes = (backward ? 5 : 3) * inner;
    return eager ? bld.unfused(name, bytes, backward ? 1.6 : 10.0 / 6.0, 2) : bld.memory(name, bytes);
  }
  const double bytes = (backward ? 3 : 2) * inner;
  return eager && a == Activation::relu2 ? bld.unfused(name, bytes, 2.0, 2) : bld.memory(name, bytes);
}

// The attention core for one micro-batch: a fused kernel (FlashAttention convention) or, for
// unfused / sdpa_math, batched GEMMs around a materialized score matrix.
void attention_core(const Builder& bld, const hardware::AttentionShape& sh, double qkv_bytes, double o_bytes,
                    double e, PassCost* fwd, PassCost* bwd) {
  const TrainingSpec& t = bld.t;
  const Precision ap = attention_precision(t);
  if (t.flash_attention) {
    if (t.fp8_attention) {  // Q, K, V (fwd) and dO (bwd) cast to FP8: read 2 B, write 1 B
      fwd->add(bld.memory("attention.quantize_fp8", qkv_bytes / e * 3));
      bwd->add(bld.memory("attention.grad_quantize_fp8", o_bytes / e * 3));
    }
    auto fused = [&](const char* name, hardware::KernelPass pass, double bytes) {
      const double flop = hardware::attention_flop(sh, pass).si();
      return bld.make(name, OpKind::attention, flop, bytes,
                      t.ideal.attention ? bld.at_peak(flop, ap)
                                        : hardware::attention_cost(bld.gpu, t.attention_impl, ap, pass, sh));
    };
    fwd->add(fused("attention", hardware::KernelPass::forward, qkv_bytes + o_bytes));
    bwd->add(fused("attention.bwd", hardware::KernelPass::backward, 2 * (qkv_bytes + o_bytes)));
    return;
  }
  // Scores S = QKᵀ [b·h, sq, skv], softmax P, O = PV; backward dP = dO·Vᵀ, dV = Pᵀ·dO,
  // dS = softmax', dQ = dS·K, dK = dSᵀ·Q. Batched over b·h: one GEMM of b·h·sq rows.
  const double bh = sh.batch * sh.heads, sq = sh.seq_q, skv = sh.seq_kv, d = sh.head_dim_qk;
  const double scores = bh * sq * skv * e;
  fwd->add(bld.gemm("qk", bh * sq, skv, d, ap));
  // PyTorch's math SDPA adds the causal mask as a separate kernel (read scores, write scores);
  // Megatron's unfused path fuses scale, mask and softmax (FusedScaleMaskSoftmax).
  if (t.attention_impl == hardware::AttentionImpl::sdpa_math) fwd->add(bld.memory("attn_mask", 2 * scores));
  fwd->add(bld.memory("softmax", 2 * scores));
  fwd->add(bld.gemm("av", bh * sq, d, skv, ap));
  bwd->add(bld.gemm("av.dgrad", bh * sq, skv, d, ap));
  bwd->add(bld.gemm("av.wgrad", bh * skv, d, sq, ap));
  bwd->add(bld.memory("softmax.bwd", 3 * scores));
  bwd->add(bld.gemm("qk.dgrad", bh * sq, d, skv, ap));
  bwd->add(bld.gemm("qk.wgrad", bh * skv, d, sq, ap));
  for (auto* pc : {fwd, bwd})
    for (auto& op : pc->ops) {
      if (op.kind == OpKind::gemm && t.ideal.attention) op.time_s = bld.at_peak(op.flop, ap).time.si() - bld.gap_saving;
      op.kind = OpKind::attention;
    }
}

// The same training spec with its GEMMs in BF16 (layers a recipe keeps in high precision).
TrainingSpec high_precision(const TrainingSpec& t) {
  TrainingSpec hp = t;
  if (hardware::is_low_precision(t.precision)) hp.precision = Precision::bf16;
  return hp;
}

// Host-bound waits, one per block pass, placed in its first part so that the by-part and the
// whole-block views agree. The CP ring steps count with the pass they belong to. A part that
// training.cuda_graph_scope captures (attn: norm, attention and the ring steps; mlp: norm and
// MLP) launches as one graph replay.
void add_host_waits(StepCosts* c, const GpuSpec& gpu, const ParallelSpec& p, const TrainingSpec& t) {
  const bool attn_graph = t.captures(GraphScope::attn), mlp_graph = t.captures(GraphScope::mlp);
  for (bool fwd : {true, false}) {
    auto& parts = fwd ? c->part_fwd : c->part_bwd;
    const PassCost& ring = fwd ? c->ring_step_fwd : c->ring_step_bwd;
    int kernels = (attn_graph ? 1 : 0) + (mlp_graph ? 1 : 0);
    double gpu_s = (p.cp - 1) * ring.time_s;
    if (!attn_graph)
      for (const auto& op : ring.ops) kernels += (p.cp - 1) * op.kernels;
    for (int i = 0; i < kBlockParts; ++i) {
      const auto& part = parts[static_cast<std::size_t>(i)];
      gpu_s += part.time_s;
      const bool mlp_part = i == norm_mlp || i == mlp || i == mlp_up_wgrad;
      if (mlp_part ? mlp_graph : attn_graph) continue;
      for (const auto& op : part.ops) kernels += op.kernels;
    }
    KernelOp wait = host_wait(gpu, PassCost{}, kernels, gpu_s, t);
    if (wait.time_s > 0) parts[norm_attn].add(std::move(wait));
  }
}

}  // namespace

namespace {

// The shapes one micro-batch's block works on, on this rank, shared by the parts below.
struct BlockShapes {
  const ModelSpec& m;
  const TrainingSpec& t;
  const ParallelSpec& p;
  const Builder& bld;
  double s, b, tokens, h, f, v, d, tp, q_local, kv_local, e;
  double act;     // one [tokens, h] activation tensor
  double sp_act;  // the same on s/tp tokens with sequence parallelism (norms, residuals, dropout)
  bool eager;     // eager PyTorch element-wise ops (training.fused_elementwise: false)

  BlockShapes(const ModelSpec& m_, const TrainingSpec& t_, const ParallelSpec& p_, const Builder& bld_)
      : m(m_), t(t_), p(p_), bld(bld_), s(double(t_.seq_len) / p_.cp), b(t_.micro_batch), tokens(b * s),
        h(m_.hidden), f(m_.ffn_hidden), v(m_.padded_vocab(p_.tp)), d(m_.head_dim()), tp(p_.tp),
        q_local(m_.heads / tp), kv_local(std::max(1.0, m_.kv_heads / tp)), e(hardware::storage_bytes(t_.precision)),
        act(tokens * h * e), sp_act(p_.sequence_parallel ? act / tp : act), eager(!t_.fused_elementwise) {}

  // Eager PyTorch runs the reference composite ops (Llama reference model.py, torchtitan
  // norms.py / complex RoPE) as separate kernels, in bf16 activations with fp32 upcasts:
  //   RMSNorm: x.float() (2 B read, 4 B written per element), pow (4+4), mean (4), x*rsqrt (4+4),
  //     type_as (4+2), *weight (2+2): 36 B against the fused 4 B, 8 kernels; backward likewise.
  //   RoPE: float() (2+4), complex multiply (4+4), type_as (4+2): 20 B against 4 B, 3 kernels
  //     per tensor.
  // LayerNorm and GELU are single kernels in eager mode too (SwiGLU: mlp_activation above).
  KernelOp norm(const char* name, double fused_bytes) const {
    return eager && m.norm == Norm::rmsnorm ? bld.unfused(name, fused_bytes, 9.0, 8) : bld.memory(name, fused_bytes);
  }
};

// The residual add closing the previous sub-block (see residual_bytes), then the sub-block's
// pre-norm (read x, write y; backward read x, dy, write dx), into `part`.
void residual_and_norm(const BlockShapes& x, StepCosts* c, BlockPart part, const char* residual, const char* norm) {
  const ResidualBytes res = residual_bytes(x.m, x.sp_act, x.e);
  c->part_fwd[part].add(x.bld.memory(residual, res.fwd));
  c->part_bwd[part].add(x.bld.memory(std::string(residual) + ".bwd", res.bwd));
  c->part_fwd[part].add(x.norm(norm, 2 * x.sp_act));
  c->part_bwd[part].add(x.norm((std::string(norm) + ".bwd").c_str(), 3 * x.sp_act));
}

// A sliding-window layer's core against the full one: a fused kernel's query tiles keep their
// fixed cost (hardware/attention_window.hpp); with materialized scores or at the ideal rate, the
// unmasked-FLOP share (models/flops.cpp).
void window_times(const BlockShapes& x, hardware::AttentionShape sh, StepCosts* c) {
  if (!x.m.sliding_window.enabled()) return;
  const double flop_share = attention_keys_fraction(x.m.sliding_window.tokens, x.t.seq_len);
  c->window_time_fwd = c->window_time_bwd = flop_share;
  if (!x.t.flash_attention || x.t.ideal.attention) return;
  sh.window = x.m.sliding_window.tokens;
  c->window_time_fwd = hardware::windowed_attention_time_ratio(x.bld.gpu, hardware::KernelPass::forward, sh);
  c->window_time_bwd = hardware::windowed_attention_time_ratio(x.bld.gpu, hardware::KernelPass::backward, sh);
}

// Residual add and pre-attention norm, QKV with rotary, the attention core by implementation
// (and the CP ring steps), the output projection.
void attention_parts(const BlockShapes& x, StepCosts* c) {
  auto& F = c->part_fwd;
  auto& B = c->part_bwd;
  const Builder& bld = x.bld;
  // The projections in their own precision when the recipe sets one (module_precision).
  const TrainingSpec lt = x.t.for_module(QuantModule::attention_linears);
  const Builder linears{bld.gpu, lt, bld.micro_batches};
  residual_and_norm(x, c, norm_attn, "residual2", "norm1");
  const double qkv_width = (x.q_local + 2 * x.kv_local) * x.d;
  linears.linear(&F[qkv], &B[qkv], &B[qkv_wgrad], "qkv", x.tokens, qkv_width, x.h, qkv_width * x.tp, x.h);
  if (x.m.position == Position::rope || x.m.position == Position::yarn) {
    const double qk = x.tokens * (x.q_local + x.kv_local) * x.d * x.e;
    if (x.eager) {
      F[qkv].add(bld.unfused("rotary", 2 * qk, 5.0, 6));
      B[qkv].add(bld.unfused("rotary.bwd", 2 * qk, 5.0, 6));
    } else if (x.m.position == Position::yarn) {
      // Megatron-Core's unfused RoPE (rope_utils.py _apply_rotary_pos_emb_bshd), per tensor of X
      // bytes: rotate_half's negation (X) and cat (2X), t·cos and rot·sin (2X each), their sum
      // (3X), the closing cat with the unrotated part (2X): 12X in 6 kernels against the fused
      // kernel's 2X. Backward: the two products' gradients (2X each), the negation (X), the
      // chunk's cat (2X) and the sum of both paths (3X): 10X in 5 kernels.
      F[qkv].add(bld.unfused("rotary", 2 * qk, 6.0, 6));
      B[qkv].add(bld.unfused("rotary.bwd", 2 * qk, 5.0, 5));
    } else {
      F[qkv].add(bld.memory("rotary", 2 * qk));
      B[qkv].add(bld.memory("rotary.bwd", 2 * qk));
    }
  }
  hardware::AttentionShape sh;  // a causal mask
  sh.batch = x.b;
  sh.heads = int(x.q_local), sh.kv_heads = int(x.kv_local);
  sh.head_dim_qk = sh.head_dim_v = int(x.d);
  sh.seq_q = sh.seq_kv = x.s;
  const double qkv_bytes = x.tokens * (x.q_local + 2 * x.kv_local) * x.d * x.e;
  const double o_bytes = x.tokens * x.q_local * x.d * x.e;
  attention_core(bld, sh, qkv_bytes, o_bytes, x.e, &F[core], &B[core]);
  window_times(x, sh, c);
  if (x.p.cp > 1) {
    // Ring attention with Megatron's load-balanced causal split (each rank holds chunks i and
    // 2cp−1−i): every step against another rank's K/V is unmasked over half of an s/cp × s/cp
    // square (TE: either the K/V half or the Q half takes part).
    hardware::AttentionShape ring = sh;
    ring.seq_kv = x.s / 2;
    ring.causal = false;
    attention_core(bld, ring, qkv_bytes, o_bytes, x.e, &c->ring_step_fwd, &c->ring_step_bwd);
    for (auto* pc : {&c->ring_step_fwd, &c->ring_step_bwd})
      for (auto& op : pc->ops) op.name = "ring_" + op.name;
    c->kv_chunk_bytes = x.tokens * 2 * x.kv_local * x.d * x.e;
  }
  linears.linear(&F[attn_out], &B[attn_out], nullptr, "attn_out", x.tokens, x.h, x.q_local * x.d, x.h,
                 x.q_local * x.d * x.tp);
}

// Residual add and pre-MLP norm, then up (gate+up when gated), activation, down.
void mlp_parts(const BlockShapes& x, StepCosts* c) {
  auto& F = c->part_fwd;
  auto& B = c->part_bwd;
  const Builder& bld = x.bld;
  residual_and_norm(x, c, norm_mlp, "residual1", "norm2");
  const bool is_gated = gated(x.m.activation);
  const double f_local = x.f / x.tp;
  const double up_width = is_gated ? 2 * f_local : f_local;
  const char* up_name = is_gated ? "mlp_gate_up" : "mlp_up";
  bld.linear(&F[mlp], nullptr, nullptr, up_name, x.tokens, up_width, x.h, up_width * x.tp, x.h);
  const double inner = x.tokens * f_local * x.e;
  F[mlp].add(mlp_activation(bld, x.m.activation, inner, x.eager, false));
  const double fp8_store =
      is_gated ? swiglu_store_cast_bytes(bld.t.activation_fp8_input_store, bld.t.precision, x.tokens * up_width) : 0.0;
  if (fp8_store > 0) F[mlp].add(bld.memory("mlp.swiglu_in.fp8_store", fp8_store));
  bld.linear(&F[mlp], &B[mlp], nullptr, "mlp_down", x.tokens, x.h, f_local, x.h, x.f);
  if (fp8_store > 0) B[mlp].add(bld.memory("mlp.swiglu_in.fp8_load", fp8_store));
  B[mlp].add(mlp_activation(bld, x.m.activation, inner, x.eager, true));
  bld.linear(nullptr, &B[mlp], &B[mlp_up_wgrad], up_name, x.tokens, up_width, x.h, up_width * x.tp, x.h);
}

// The block's passes as the parts in order (and the CP ring steps), and what recompute repeats.
void block_totals(const ParallelSpec& p, const TrainingSpec& t, StepCosts* c) {
  for (int part = 0; part < kBlockParts; ++part) {
    for (const auto& op : c->part_fwd[static_cast<std::size_t>(part)].ops) c->layer_fwd.add(op);
    for (const auto& op : c->part_bwd[static_cast<std::size_t>(part)].ops) c->layer_bwd.add(op);
  }
  for (int step = 1; step < p.cp; ++step) {
    for (const auto& op : c->ring_step_fwd.ops) c->layer_fwd.add(op);
    for (const auto& op : c->ring_step_bwd.ops) c->layer_bwd.add(op);
  }
  if (t.recompute == Recompute::full) c->layer_recompute = c->layer_fwd;
  if (t.recompute == Recompute::selective) {
    c->layer_recompute = c->part_fwd[core];
    for (int step = 1; step < p.cp; ++step)
      for (const auto& op : c->ring_step_fwd.ops) c->layer_recompute.add(op);
  }
}

// Embedding lookup (+ learned positions) after the batch upload; the head: final norm, logits
// GEMM over the vocabulary shard, cross-entropy over the logits (training.cross_entropy).
void embedding_and_head(const BlockShapes& x, const GpuSpec& gpu, double host_bps, StepCosts* c) {
  const Builder& bld = x.bld;
  c->embed_fwd.add(batch_upload(x.t, host_bps));
  c->embed_fwd.add(bld.memory("embedding", (x.m.position == Position::learned ? 3 : 2) * x.act));
  c->embed_bwd.add(bld.memory("embedding.bwd", 3 * x.act));
  const double logits = x.tokens * (x.v / x.tp);
  c->head_fwd.add(x.norm("final_norm", 2 * x.sp_act));
  // The LM head stays in BF16 under low precision: Megatron's output_layer is a plain
  // ColumnParallelLinear, not a Transformer Engine module; torchtitan's float8 converter is
  // configured with filter_fqns = ["output"].
  const TrainingSpec head_t = high_precision(x.t);
  const Builder head_bld{gpu, head_t, bld.micro_batches};
  head_bld.linear(&c->head_fwd, &c->head_bwd, nullptr, "lm_head", x.tokens, x.v / x.tp, x.h, x.v, x.h);
  if (x.t.cross_entropy == CrossEntropy::fused) {
    // Forward: two passes over the logits (the row max, then the sum of exponentials and the
    // loss: apex/flash-attn xentropy; TE's online softmax reads once and writes the gradient in
    // place); backward reads them and writes the gradient.
    c->head_fwd.add(bld.memory("cross_entropy", logits * 2 * x.e));
    c->head_bwd.add(bld.memory("cross_entropy.bwd", logits * 2 * x.e));
  } else {
    c->head_fwd.add(bld.memory("cross_entropy", logits * (x.e + 4 + 4)));
    c->head_bwd.add(bld.memory("cross_entropy.bwd", logits * (4 + x.e)));
  }
  c->head_bwd.add(x.norm("final_norm.bwd", 3 * x.sp_act));
  for (auto* pass : {&c->embed_fwd, &c->embed_bwd, &c->head_fwd, &c->head_bwd}) {
    KernelOp wait = host_wait(gpu, *pass, 0, 0, x.t);
    if (wait.time_s > 0) pass->add(std::move(wait));
  }
}

}  // namespace

StepCosts step_costs(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                     const GpuSpec& gpu, double host_bps) {
  const Builder bld{gpu, t, double(std::max(1, t.micro_batches(p)))};
  const BlockShapes x(m, t, p, bld);
  StepCosts c;
  attention_parts(x, &c);
  mlp_parts(x, &c);
  add_host_waits(&c, gpu, p, t);
  block_totals(p, t, &c);
  c.recompute_share = recompute_share(m.layers, t, p);
  embedding_and_head(x, gpu, host_bps, &c);
  const ParamCount pc = count_params(m, t.seq_len);
  c.layer_params = pc.per_layer / x.tp;
  c.activation_bytes = x.act;
  // The norm for clipping runs over this rank's gradient shard (distributed optimizer: 1/dp·cp).
  const double shard = p.zero_stage >= 1 ? double(p.dp) * p.cp : 1.0;
  c.step_fixed = step_fixed_work(gpu, t, pc.total / (x.tp * p.pp) / shard);
  return c;
}

}  // namespace clustersim::models
