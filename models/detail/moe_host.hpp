#pragma once
// The host side of an MoE block: how many kernels each part of Megatron-Core's MoE layer launches
// (router, dispatcher preprocess, permutes, exchanges), and a host timeline that issues a block's
// kernels in order at the per-launch cost, with the device-to-host synchronization of the tokens
// per expert that makes the CPU wait for the GPU. Sources in moe_host.cpp; docs/moe.md.
#include <vector>

#include "models/training_spec.hpp"

namespace clustersim::models {

/// One kernel as the host issues it, or one CUDA-graph replay of a captured part.
struct HostItem {
  double launches = 1;  ///< host launches it takes, in plain-op units (a graph replay: 1; host_op_units)
  double gpu_s = 0;   ///< GPU time once it runs
  bool sync = false;  ///< the CPU waits for every kernel issued so far before issuing this one
};

/// What one pass of the timeline leaves: the GPU's idle time waiting for launches, and how far
/// the GPU's queued work reaches past the moment the CPU issued the last kernel (its run-ahead).
struct HostRun {
  double idle_s = 0;
  double lead_s = 0;
};

/// Issues `items` in order from one CPU thread at `launch_s` per launch, the GPU still busy for
/// `lead_s` with earlier work: a kernel starts when it is issued and the GPU is free; a sync item
/// first waits until the GPU is idle.
HostRun run_host_timeline(const std::vector<HostItem>& items, double launch_s, double lead_s = 0);

/// The GPU idle time per block when the same block runs layer after layer. With a sync in the
/// block the CPU's run-ahead restarts at every sync, so the block's steady state is its timeline
/// entered with the run-ahead its own tail leaves; without one the run-ahead accumulates and
/// only launches beyond the GPU time are exposed, max(0, launches · launch_s − GPU time).
double steady_host_idle(const std::vector<HostItem>& items, double launch_s);

/// `items` replayed as one CUDA graph: one launch, their GPU time, no sync inside.
HostItem graph_of(const std::vector<HostItem>& items);

/// Kernels each part of one MoE layer's forward launches on one rank (Megatron-Core, eager).
/// deepep: the router count covers the router and the fused dispatch preprocess.
struct MoeKernelCounts {
  int router = 0;          ///< router GEMM, score function, top-k, aux loss and its bookkeeping
  int preprocess = 0;      ///< tokens-per-expert counts, their all-gather and D2H copies
  int permute = 0;         ///< permutation 1 (tokens to their experts' ranks)
  int sort_chunks = 0;     ///< permutation 2 (received tokens by local expert)
  int unsort_chunks = 0;   ///< its inverse before the combine
  int unpermute = 0;       ///< unpermutation 1 (weighted sum of the k outputs)
  int dispatch = 0;        ///< dispatch exchanges (tokens and probabilities)
  double dispatch_units = 0;  ///< the forward dispatch call's host time, in plain-op units
  int combine = 0;         ///< combine exchange
  int permute_syncs = 0;   ///< host syncs inside the unfused permute (masked_select → nonzero)
  int unpermute_syncs = 0; ///< the same in the unfused unpermute
};
MoeKernelCounts moe_kernel_counts(const TrainingSpec& t, const ParallelSpec& p, int local_experts);

/// Host time of the forward's dispatch call in plain-op units (DeepEP / HybridEP: measured).
double dispatch_call_units(MoeDispatcher d);

/// Where the dispatcher's tokens-per-expert sync falls in the forward.
enum class MoeSyncPoint { before_dispatch, before_sort, before_experts };
MoeSyncPoint moe_sync_point(const TrainingSpec& t, const ParallelSpec& p, int local_experts);

/// The kernel counts of the router's three states the Megatron-LM guide measured (72, 31, 17).
int router_kernels(bool router_fusion, bool deepep);

}  // namespace clustersim::models
