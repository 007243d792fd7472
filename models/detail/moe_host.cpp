#include "models/detail/moe_host.hpp"

#include <algorithm>

#include "hardware/gpu_spec.hpp"

namespace clustersim::models {

// Sources of the counts below (forward, one MoE layer, one rank):
// [G] Megatron-LM guide "Optimizing DeepSeek-V3 Training Performance on NVIDIA GB200 NVL72"
//     (github.com/NVIDIA/Megatron-LM, branch dev, docs/discussions/deepseek-v3-gb200-optimization/
//     deepseek-v3-gb200-optimization.md), measured in Nsys on DeepSeek-V3: the router part runs 72
//     kernels, 31 with --moe-router-fusion (§2.1.4); with DeepEP's fused preprocess "the router
//     and preprocess parts" run 17 (§2.2.1).
// [D] counted from Megatron-Core (github.com/NVIDIA/Megatron-LM at 0014f137,
//     megatron/core/transformer/moe/token_dispatcher.py MoEAlltoAllTokenDispatcher.preprocess,
//     dispatch_all_to_all, _maybe_dtoh_and_synchronize; moe_utils.py permute, unpermute,
//     sort_chunks_by_idxs), one kernel per tensor op that writes memory (views, reshapes and
//     transposes launch none).
// [N] Megatron-Bridge @067f987d skills/nemo-mbridge-perf-moe-comm-overlap (data/validation/
//     moe_host_overhead.csv): Nsight Systems on rank 0 of Qwen3-30B-A3B on 16 H100 (DGX, Xeon
//     8480C), HybridEP with permute fusion, EP overlap on: the NVTX range of the dispatch call
//     (dispatch with permute) totals 1.767 s per step over 64 micro-batches x 48 MoE layers,
//     0.575 ms per call. Overlap off it is 1.38 ms, which includes waiting for the GPU; with
//     overlap on the call waits the least, so 0.575 ms is the CPU's own work at most.
// [E] assumed, not counted: the kernels inside one PyTorch masked_select (3: broadcast mask,
//     nonzero, gather; nonzero copies its count to the host, a sync) and inside TE's fused
//     permute ops (2: the row-id map and the permute), DeepEP's dispatch (2: notify + dispatch).
namespace {
constexpr int kRouterUnfused = 72;        // [G] §2.1.4
constexpr int kRouterFused = 31;          // [G] §2.1.4
constexpr int kRouterPreprocessDeepep = 17;  // [G] §2.2.1, router and preprocess together
constexpr int kMaskedSelect = 3;          // [E]
constexpr int kTeFusedPermute = 2;        // [E]
constexpr int kDeepepDispatch = 2;        // [E]
// [N], in units of the same host's plain op (hardware::kX86HostLaunchS, host_op_cost.csv: the DGX
// H100's Xeon): the Python and metadata work of the call runs on that core, so it scales with the host.
constexpr double kDeepepDispatchCallUnits = 1.767 / (64 * 48) / hardware::kX86HostLaunchS;
}  // namespace

int router_kernels(bool router_fusion, bool deepep) {
  if (!deepep) return router_fusion ? kRouterFused : kRouterUnfused;
  // [D] from [G]: DeepEP's preprocess removes 31 − 17 = 14 of the fused router's kernels; the
  // unfused router keeps its other 72 − 31.
  return router_fusion ? kRouterPreprocessDeepep : kRouterUnfused - (kRouterFused - kRouterPreprocessDeepep);
}

MoeKernelCounts moe_kernel_counts(const TrainingSpec& t, const ParallelSpec& p, int local_experts) {
  const bool deepep = uses_ep_kernels(t.moe_dispatcher), fused = t.moe_permute_fusion;
  MoeKernelCounts k;
  k.router = router_kernels(t.moe_router_fusion, deepep);
  if (!deepep) {
    // [D] preprocess with ep > 1 or tp > 1: routing_map.sum, input_splits sum, the all-gather of
    // the counts over TP×EP, the local slice's contiguous copy, two sums (per rank, per TP rank),
    // the per-local-expert sum = 7; the D2H copies of tokens_per_expert, input_splits,
    // output_splits, output_splits_tp = 4, and num_global_tokens_per_local_expert when the
    // unfused permutation 2 needs it on the host. ep = tp = 1: the sum and one copy.
    // The allgather dispatcher is given the same counts [E].
    const bool splits = p.ep > 1 || p.tp > 1;
    k.preprocess = splits ? 7 + 4 + (!fused && local_experts > 1 ? 1 : 0) : 2;
  }
  // [D] unfused permute: routing_map.T.contiguous, arange, masked_select of the token indices and
  // of the probabilities, probs.T.contiguous, index_select; unpermute: probs.T and
  // routing_map.T contiguous, masked_select, the multiply by the probabilities, zeros,
  // scatter_add, the cast back. Fused (TE moe_permute_with_probs / moe_unpermute): [E].
  k.permute = fused ? kTeFusedPermute : 4 + 2 * kMaskedSelect;
  k.permute_syncs = fused ? 0 : 2;
  k.unpermute = fused ? 1 : 6 + kMaskedSelect;
  k.unpermute_syncs = fused ? 0 : 1;
  // [D] sort_chunks_by_idxs with more than one local expert: a torch.cat of the tokens and one of
  // the probabilities (fused: one TE kernel); the inverse one cat (fused: one kernel).
  k.sort_chunks = local_experts > 1 ? (fused ? 1 : 2) : 0;
  k.unsort_chunks = local_experts > 1 ? 1 : 0;
  // [D] dispatch_all_to_all: the tokens and the probabilities; combine_all_to_all: the tokens.
  k.dispatch = p.ep > 1 ? (deepep ? kDeepepDispatch : 2) : 0;
  k.dispatch_units = p.ep > 1 ? dispatch_call_units(t.moe_dispatcher) : 0;
  k.combine = p.ep > 1 ? 1 : 0;
  return k;
}

double dispatch_call_units(MoeDispatcher d) {
  // alltoall: taken as the HybridEP call's [E] (not measured): the same Python bookkeeping around
  // the same tokens (splits, output allocation, the fused permute) and an all_to_all_single whose
  // uneven splits the CPU issues as a group of ep sends and receives. Checked against the card's
  // alltoall / HybridEP pair (moe_ab_pairs_test: 1.674 measured; 1.628 with two ops here, 1.662
  // with the HybridEP call's time). allgather: its two collective calls, one op each [E].
  return d == MoeDispatcher::allgather ? 2.0 : kDeepepDispatchCallUnits;
}

MoeSyncPoint moe_sync_point(const TrainingSpec& t, const ParallelSpec& p, int local_experts) {
  // [D] MoEAlltoAllTokenDispatcher.preprocess: "before_ep_alltoall" when ep > 1 or tp > 1,
  // moved to "before_permutation_2" when the unfused permutation 2 needs the per-local-expert
  // counts on the host; "before_finish" (before the experts) otherwise. DeepEP: the guide's
  // "device-host sync for tokens per expert" that keeps dropless MoE out of CUDA graphs ([G]
  // §2.3, §3.1), at its dispatch. allgather: before the experts [E].
  if (uses_ep_kernels(t.moe_dispatcher)) return MoeSyncPoint::before_dispatch;
  if (t.moe_dispatcher == MoeDispatcher::allgather || (p.ep == 1 && p.tp == 1)) return MoeSyncPoint::before_experts;
  return !t.moe_permute_fusion && local_experts > 1 ? MoeSyncPoint::before_sort : MoeSyncPoint::before_dispatch;
}

HostRun run_host_timeline(const std::vector<HostItem>& items, double launch_s, double lead_s) {
  double cpu = 0, gpu = lead_s, idle = 0;
  for (const HostItem& it : items) {
    if (it.sync) cpu = std::max(cpu, gpu);  // the host blocks until the queue has drained
    cpu += it.launches * launch_s;
    const double start = std::max(gpu, cpu);
    idle += start - gpu;
    gpu = start + it.gpu_s;
  }
  return {idle, gpu - cpu};
}

double steady_host_idle(const std::vector<HostItem>& items, double launch_s) {
  const bool syncs = std::any_of(items.begin(), items.end(), [](const HostItem& it) { return it.sync; });
  if (syncs) return run_host_timeline(items, launch_s, run_host_timeline(items, launch_s).lead_s).idle_s;
  double launches = 0, gpu = 0;
  for (const HostItem& it : items) launches += it.launches, gpu += it.gpu_s;
  return std::max(0.0, launches * launch_s - gpu);
}

HostItem graph_of(const std::vector<HostItem>& items) {
  HostItem g;
  g.gpu_s = 0;
  for (const HostItem& it : items) g.gpu_s += it.gpu_s;
  return g;
}

}  // namespace clustersim::models
