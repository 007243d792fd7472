// The host timeline of one MoE block (declared in step_program_moe.hpp): the block's kernels in
// the order Megatron-Core issues them, with the counts of models/moe_host.cpp, captured parts as
// one graph replay each, and the dispatcher's tokens-per-expert sync.
#include <algorithm>
#include <array>
#include <vector>

#include "models/layer_ops_host.hpp"
#include "models/detail/moe_host.hpp"
#include "models/step_program_moe.hpp"

namespace clustersim::models {
namespace {

// A block pass's kernels in issue order, by capture segment.
class HostList {
 public:
  HostList(double gap, double launch_s) : gap_(gap), launch_s_(launch_s) {}
  /// Later kernels belong to the part a graph of `scope` captures (false: eager).
  void segment(bool captured) {
    flush();
    captured_ = captured;
  }
  /// `launches` kernels sharing `gpu_s` of GPU time that the block's program already holds.
  /// `units`: their host cost in plain-op units (default: one each).
  void kernels(int launches, double gpu_s, double units = -1) {
    if (launches <= 0) {
      if (!cur_.empty()) cur_.back().gpu_s += gpu_s;
      else if (gpu_s > 0) push({0, gpu_s, false});
      return;
    }
    const double each = units < 0 ? 1.0 : units / launches;
    for (int i = 0; i < launches; ++i) push({each, gpu_s / launches, false});
  }
  /// `n` small kernels the block's program does not hold: each the profile's kernel gap on the GPU.
  void small(int n) {
    for (int i = 0; i < n; ++i) push({1, gap_, false});
    extra_gpu_s_ += n * gap_;
  }
  /// Every op of `pass`, a launch per kernel it stands for (the host wait op excluded).
  void pass(const PassCost& pass) {
    for (const KernelOp& op : pass.ops)
      if (op.name != "host_launch_wait") kernels(op.kernels, op.time_s, host_op_units(op));
  }
  /// The launches of `pass` with `gpu_s` of GPU time (a part whose time was rescaled).
  void pass_as(const PassCost& pass, double gpu_s) {
    int n = 0;
    double units = 0;
    for (const KernelOp& op : pass.ops)
      if (op.name != "host_launch_wait") n += op.kernels, units += host_op_units(op);
    kernels(n, gpu_s, units);
  }
  void comm(const topologies::CollectiveTime& c, int launches, double units = -1) {
    if (launches > 0 && c.time.si() > 0) kernels(launches, c.time.si(), units);
  }
  /// The next kernel waits for the GPU to drain (a device-to-host sync before it).
  void sync() { sync_next_ = true; }
  double idle() {
    flush();
    return steady_host_idle(items_, launch_s_) + extra_gpu_s_;
  }

 private:
  void push(HostItem it) {
    it.sync = sync_next_ && !captured_;
    sync_next_ = false;
    cur_.push_back(it);
  }
  void flush() {
    if (cur_.empty()) return;
    if (captured_) items_.push_back(graph_of(cur_));
    else items_.insert(items_.end(), cur_.begin(), cur_.end());
    cur_.clear();
  }
  double gap_, launch_s_;
  std::vector<HostItem> items_, cur_;
  bool captured_ = false, sync_next_ = false;
  double extra_gpu_s_ = 0;
};

double part(const std::array<double, kBlockParts>& a, BlockPart x) { return a[static_cast<std::size_t>(x)]; }

// Input norm and the mixer with its TP collectives: attention (MLA's projections and core, or
// QKV, core with its CP ring steps and output projection), Megatron's `attn` graph scope; or a
// Mamba mixer (`mamba` scope) or a linear-attention one (`attn`), `recurrent`.
void attention(HostList& h, const TrainingSpec& t, const ParallelSpec& p, const StepCosts& c, const BlockParts& b,
               const MlaOps* mla, const BlockMixer& recurrent, const TpComms& tp, bool fwd) {
  const auto& parts = fwd ? c.part_fwd : c.part_bwd;
  const auto& times = fwd ? b.fwd : b.bwd;
  h.segment(t.captures(recurrent.ops ? recurrent.scope : GraphScope::attn));
  h.pass_as(parts[norm_attn], part(times, norm_attn));
  h.comm(tp.ag, p.sequence_parallel ? 1 : 0);
  if (recurrent.ops) {
    const MambaOps& r = *recurrent.ops;
    for (const PassCost* pass :
         {fwd ? &r.in_fwd : &r.in_bwd, fwd ? &r.core_fwd : &r.core_bwd, fwd ? &r.out_fwd : &r.out_bwd})
      h.pass(*pass);
  } else if (mla) {
    h.pass(fwd ? mla->fwd : mla->bwd);
    if (!fwd)
      for (const KernelOp& op : mla->fwd.ops)  // the up projections (mHC sites) rerun before the backward
        if (rerun_before_backward(op.name, t)) h.kernels(op.kernels, op.time_s);
  } else {
    for (BlockPart x : {qkv, core, attn_out}) h.pass_as(parts[x], part(times, x));
    if (!fwd) h.pass_as(parts[qkv_wgrad], part(times, qkv_wgrad));
    const PassCost& ring = fwd ? c.ring_step_fwd : c.ring_step_bwd;
    for (int i = 1; i < p.cp; ++i) h.pass_as(ring, fwd ? b.ring_fwd : b.ring_bwd);
  }
  h.comm(tp.out, p.tp > 1 ? 1 : 0);
}

// Pre-MLP norm, router and shared experts: Megatron's `moe_router` graph scope ("also capture
// shared experts unless the shared experts overlap is enabled", guide §2.3).
void router(HostList& h, const TrainingSpec& t, const ParallelSpec& p, const StepCosts& c, const BlockParts& b,
            const MoeLayerOps& o, const TpComms& tp, const MoeKernelCounts& k, bool fwd) {
  h.segment(t.captures(GraphScope::moe_router));
  h.pass_as((fwd ? c.part_fwd : c.part_bwd)[norm_mlp], part(fwd ? b.fwd : b.bwd, norm_mlp));
  const bool shared = !o.shared_fwd.ops.empty();
  h.comm(tp.ag, shared && p.sequence_parallel ? 1 : 0);
  h.pass(fwd ? o.shared_fwd : o.shared_bwd);
  h.comm(tp.out, shared && p.tp > 1 ? 1 : 0);
  // The guide's counts are the router part's forward; its backward is taken as one kernel per
  // forward kernel [E] (autograd runs a backward per differentiable op; the integer bookkeeping
  // has none, so this is an upper end).
  const PassCost& r = fwd ? o.router_fwd : o.router_bwd;
  h.pass(r);
  int modelled = 0;
  for (const KernelOp& op : r.ops) modelled += op.kernels;
  h.small(std::max(0, k.router - modelled));
}

}  // namespace

BlockHostWait moe_host_waits(const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu,
                             const StepCosts& c, const BlockParts& b, const MlaOps* mla, const BlockMixer& recurrent,
                             const MoeLayerOps& o, const TpComms& tp, const RoutedExchanges& x) {
  BlockHostWait w;
  if (t.cuda_graphs || t.ideal.host) return w;
  const MoeKernelCounts k = moe_kernel_counts(t, p, o.local_experts);
  const MoeSyncPoint sync = moe_sync_point(t, p, o.local_experts);
  const double gap = kernel_gap_s(gpu, t);
  const double permute_f = o.permute_fwd.time_s / 2, permute_b = o.permute_bwd.time_s / 2;
  // A permute's kernels with its GPU time; the unfused ones sync at their masked_selects.
  auto permute = [&](HostList& h, int launches, int syncs, double gpu_s) {
    const int before = syncs > 0 ? launches / (syncs + 1) : launches;
    h.kernels(before, gpu_s * before / launches);
    for (int s = 0; s < syncs; ++s) {
      const int n = (launches - before) / syncs + (s == syncs - 1 ? (launches - before) % syncs : 0);
      h.sync();
      h.kernels(n, gpu_s * n / launches);
    }
  };
  {  // Forward, in Megatron-Core's order (TransformerLayer, MoELayer, MoEAlltoAllTokenDispatcher).
    HostList h(gap, host_launch_s(gpu));
    attention(h, t, p, c, b, mla, recurrent, tp, true);
    router(h, t, p, c, b, o, tp, k, true);
    h.segment(t.captures(GraphScope::moe_preprocess));
    h.small(k.preprocess);
    permute(h, k.permute, k.permute_syncs, permute_f);
    h.segment(false);  // the routed experts stay eager: their shapes change every step
    if (sync == MoeSyncPoint::before_dispatch) h.sync();
    h.comm(x.dispatch, k.dispatch, k.dispatch_units);
    h.comm(x.etp_ag, p.etp > 1 ? 2 : 0);
    if (sync == MoeSyncPoint::before_sort) h.sync();
    h.small(k.sort_chunks);
    if (sync == MoeSyncPoint::before_experts) h.sync();
    h.pass(o.experts_fwd);
    h.small(k.unsort_chunks);
    h.comm(x.etp_rs, p.etp > 1 ? 1 : 0);
    h.comm(x.combine, k.combine);
    permute(h, k.unpermute, k.unpermute_syncs, permute_f);
    w.fwd = h.idle();
  }
  {  // Backward: the routed half first, then the router and shared experts, then the attention.
    // No host sync (the split sizes are on the host from the forward); the unfused permutes'
    // masked_select runs forward only.
    HostList h(gap, host_launch_s(gpu));
    h.segment(false);
    h.kernels(k.unpermute, permute_b);
    h.comm(x.combine_grad, k.combine);
    h.comm(x.etp_ag, p.etp > 1 ? 1 : 0);
    h.small(k.unsort_chunks);
    h.pass(o.experts_bwd);
    h.small(k.sort_chunks);
    h.comm(x.etp_rs, p.etp > 1 ? 1 : 0);
    h.comm(x.dispatch_grad, k.dispatch);
    h.segment(t.captures(GraphScope::moe_preprocess));
    h.kernels(k.permute, permute_b);
    router(h, t, p, c, b, o, tp, k, false);
    attention(h, t, p, c, b, mla, recurrent, tp, false);
    w.bwd = h.idle();
  }
  return w;
}

}  // namespace clustersim::models
