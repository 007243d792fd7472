#include "models/step_program.hpp"

#include <array>

namespace clustersim::models {

using topologies::Collective;
using topologies::CollectiveTime;
using topologies::GroupDim;

const char* name(TaskKind k) {
  switch (k) {
    case TaskKind::forward: return "forward";
    case TaskKind::backward: return "backward";
    case TaskKind::recompute: return "recompute";
    case TaskKind::optimizer: return "optimizer";
    case TaskKind::dp_grad_reduce: return "dp_grad_reduce";
    case TaskKind::dp_param_gather: return "dp_param_gather";
    case TaskKind::sync: return "sync";
    case TaskKind::tp_comm: return "tp_comm";
    case TaskKind::cp_comm: return "cp_comm";
    case TaskKind::pp_send: return "pp_send";
    case TaskKind::ep_comm: return "ep_comm";
    case TaskKind::ep_exposed:
      return "ep_exposed";
    case TaskKind::weight_grad: return "weight_grad";
  }
  return "?";
}

void ProgramWriter::compute(double s, int part) {
  if (s <= 0) return;
  const auto bit = static_cast<std::uint16_t>(part >= 0 ? 1u << part : 0u);
  if (!items_.empty() && !items_.back().comm && !items_.back().sealed && !seal_next_) {
    items_.back().seconds += s;
    items_.back().parts |= bit;
    return;
  }
  ProgramItem it;
  it.seconds = s;
  it.parts = bit;
  it.sealed = seal_next_;
  seal_next_ = false;
  items_.push_back(it);
}

void ProgramWriter::comm(const CollectiveTime& cost, TaskKind kind, bool wait_now, int start_after) {
  if (cost.time.si() <= 0) return;
  ProgramItem it;
  it.comm = true;
  it.seconds = cost.time.si();
  it.kind = kind;
  it.cost = cost;
  it.wait_now = wait_now;
  it.start_after = start_after;
  if (!items_.empty() && !items_.back().comm) items_.back().sealed = true;
  if (!wait_now) seal_next_ = true;  // the overlapped compute must stay a task of its own
  items_.push_back(it);
}

void ProgramWriter::detached_comm(const CollectiveTime& cost, TaskKind kind, int start_after) {
  if (cost.time.si() <= 0) return;
  comm(cost, kind, false, start_after);
  items_.back().detached = true;
}

void ProgramWriter::append(const Program& items) {
  for (const ProgramItem& it : items) {
    if (it.comm && it.detached) detached_comm(it.cost, it.kind, it.start_after);
    else if (it.comm) comm(it.cost, it.kind, it.wait_now, it.start_after);
    else compute_parts(it.seconds, it.parts);
  }
}

void ProgramWriter::compute_parts(double s, std::uint16_t parts) {
  if (s <= 0) return;
  compute(s);
  items_.back().parts |= parts;
}

namespace {

double part(const std::array<double, kBlockParts>& a, BlockPart x) { return a[static_cast<std::size_t>(x)]; }

// The attention core with CP: cp − 1 ring steps, each K/V transfer overlapping the previous
// chunk's attention (every CP rank sends its chunk to the next one at once).
void ring(ProgramWriter& w, const ParallelSpec& p, const topologies::Network& net, double first, double step,
          double kv_bytes) {
  if (p.cp == 1) return w.compute(first, core);
  const CollectiveTime hop = net.cost(Collective::send_recv, GroupDim::cp, units::Bytes(kv_bytes));
  for (int i = 1; i < p.cp; ++i) {
    w.comm(hop, TaskKind::cp_comm, false, i == 1 ? 1 : 0);
    w.compute(i == 1 ? first : step, core);
  }
  w.compute(step, core);
}

}  // namespace

BlockParts block_parts(const StepCosts& c) {
  BlockParts b;
  for (std::size_t i = 0; i < kBlockParts; ++i) {
    b.fwd[i] = c.part_fwd[i].time_s, b.bwd[i] = c.part_bwd[i].time_s;
    b.bwd_input[i] = input_grad_s(c.part_bwd[i]), b.wgrad[i] = weight_grad_s(c.part_bwd[i]);
  }
  b.ring_fwd = c.ring_step_fwd.time_s, b.ring_bwd = c.ring_step_bwd.time_s;
  return b;
}

UnitProgram transformer_block(const ParallelSpec& p, const BlockParts& parts, const StepCosts& c,
                              const topologies::Network& net, const TpComms& x, const RoutedProgram* routed) {
  const bool tp = p.tp > 1, sp = tp && p.sequence_parallel, ov = p.tp_comm_overlap;
  const auto& F = parts.fwd;
  const auto& B = parts.bwd;
  ProgramWriter f;
  const bool at = parts.has_mixer, mt = parts.has_mlp;
  f.compute(part(F, norm_attn), norm_attn);
  if (sp && at) f.comm(x.ag, TaskKind::tp_comm, !ov, 1);
  f.compute(part(F, qkv), qkv);
  ring(f, p, net, part(F, core), parts.ring_fwd, c.kv_chunk_bytes);
  if (ov && at) f.split();  // the output collective overlaps the GEMM that produces it
  f.compute(part(F, attn_out), attn_out);
  if (tp && at) f.comm(x.out, TaskKind::tp_comm, true, ov ? 2 : 1);
  f.compute(part(F, norm_mlp), norm_mlp);
  const bool mlp_tp = mt && (!routed || routed->shared);  // the routed experts' TP traffic is in `routed`
  if (sp && mlp_tp) f.comm(x.ag, TaskKind::tp_comm, !ov, 1);
  if (ov && mt) f.split();
  f.compute(part(F, mlp), mlp);
  if (tp && mlp_tp) f.comm(x.out, TaskKind::tp_comm, true, ov ? 2 : 1);
  if (routed) f.append(routed->forward);
  // Backward: the input-gradient collective of a column-parallel GEMM overlaps its wgrad. Split
  // (B and W passes): B leaves the wgrad GEMMs to W, so that collective has nothing to hide
  // behind and the next B kernel (the norm backward, which reads the reduced gradient) waits.
  const bool split = p.splits_backward();
  const auto& BI = split ? parts.bwd_input : B;
  ProgramWriter b, w;
  auto wgrad = [&](BlockPart bp) {
    if (split) w.compute(part(parts.wgrad, bp), bp);
  };
  if (routed) b.append(routed->backward), w.append(routed->weight_grad);
  if (sp && mlp_tp) b.comm(x.ag, TaskKind::tp_comm, !ov, 1);
  b.compute(part(BI, mlp), mlp);
  wgrad(mlp);
  if (tp && mlp_tp) b.comm(x.out, TaskKind::tp_comm, split, 1);
  b.compute(part(BI, mlp_up_wgrad), mlp_up_wgrad);
  wgrad(mlp_up_wgrad);
  b.compute(part(BI, norm_mlp), norm_mlp);
  if (sp && at) b.comm(x.ag, TaskKind::tp_comm, !ov, 1);
  b.compute(part(BI, attn_out), attn_out);
  wgrad(attn_out);
  ring(b, p, net, part(BI, core), parts.ring_bwd, 2 * c.kv_chunk_bytes);  // K/V and dK/dV
  b.compute(part(BI, qkv), qkv);
  wgrad(qkv);
  if (tp && at) b.comm(x.out, TaskKind::tp_comm, split, 1);
  b.compute(part(BI, qkv_wgrad), qkv_wgrad);
  wgrad(qkv_wgrad);
  b.compute(part(BI, norm_attn), norm_attn);
  return {f.take(), b.take(), w.take()};
}

TpComms tp_comms(const ParallelSpec& p, const StepCosts& c, const topologies::Network& net) {
  const bool tp = p.tp > 1, sp = tp && p.sequence_parallel;
  const double act = c.activation_bytes;
  TpComms x;
  if (sp) x.ag = net.cost(Collective::all_gather, GroupDim::tp, units::Bytes(act));
  if (tp) x.out = net.cost(sp ? Collective::reduce_scatter : Collective::all_reduce, GroupDim::tp, units::Bytes(act));
  return x;
}

BlockProgram dense_block_program(const TrainingSpec& t, const ParallelSpec& p, const StepCosts& c,
                                 const topologies::Network& net) {
  const bool tp = p.tp > 1, sp = tp && p.sequence_parallel;
  const TpComms x = tp_comms(p, c, net);
  BlockProgram prog;
  prog.blocks.push_back(transformer_block(p, block_parts(c), c, net, x, nullptr));
  if (t.recompute == Recompute::selective) prog.selective_recompute_s = c.layer_recompute.time_s;
  // Embedding: vocab-parallel lookup, then all-reduce (reduce-scatter with SP) of the output.
  ProgramWriter ef, eb, hf, hb, hw;
  ef.compute(c.embed_fwd.time_s);
  if (tp) ef.comm(x.out, TaskKind::tp_comm, true, 1);
  if (sp) eb.comm(x.ag, TaskKind::tp_comm, true, 1);
  eb.compute(c.embed_bwd.time_s);
  // Head: the column-parallel LM head needs the full sequence (all-gather with SP); its input
  // gradient is all-reduced (reduce-scattered with SP).
  if (sp) hf.comm(x.ag, TaskKind::tp_comm, true, 1);
  hf.compute(c.head_fwd.time_s);
  // Split: the LM head's wgrad is its W item; the embedding's backward (a scatter-add into the
  // embedding gradient, no input gradient) stays in B, where nothing waits for it.
  const bool split = p.splits_backward();
  hb.compute(split ? input_grad_s(c.head_bwd) : c.head_bwd.time_s);
  if (tp) hb.comm(x.out, TaskKind::tp_comm, true, 1);
  if (split) hw.compute(weight_grad_s(c.head_bwd));
  prog.embedding = {ef.take(), eb.take(), {}};
  prog.head = {hf.take(), hb.take(), hw.take()};
  return prog;
}

}  // namespace clustersim::models
