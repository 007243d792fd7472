#pragma once
// The ZeRO / FSDP sharding policy of a step: which passes carry DP traffic tied to individual
// units (so they cannot run merged), when gradients are reduced, when parameters are gathered.
// Megatron's distributed optimizer (ZeRO-1), ZeRO-2, and FSDP (ZeRO-3) with PyTorch
// pipelining's rules (ParallelSpec).
#include <algorithm>

#include "models/pipeline.hpp"
#include "models/training_spec.hpp"

namespace clustersim::models {

class ShardingPolicy {
 public:
  /// `micro_batches`: of the step being built (a steady-state sample has fewer than t's).
  ShardingPolicy(const TrainingSpec& t, const ParallelSpec& p, int micro_batches)
      : t_(t), p_(p), mbs_(micro_batches), dp_ranks_(p.dp * p.cp), zero_(dp_ranks_ > 1 ? step_zero_stage(t, p) : 0) {}

  /// Ranks the gradients are reduced (and ZeRO states sharded) over: DP × CP (Megatron).
  int dp_ranks() const { return dp_ranks_; }
  /// The ZeRO stage in effect (0 without DP ranks to shard over).
  int zero() const { return zero_; }
  /// ZeRO-3 keeps each block's gathered parameters for the step (see FsdpReshard).
  bool keeps_params() const { return zero_ == 3 && p_.keeps_gathered_params(); }
  /// ZeRO-3 gathers a unit's parameters before this pass (not before a W pass: dW = Xᵀ·dY
  /// reads no weights).
  bool gathers_unit(const PipeOp& op) const {
    return zero_ == 3 && op.kind != PassKind::weight_grad && (!keeps_params() || (op.forward() && op.micro_batch == 0));
  }
  /// The pass that completes a unit's weight gradients, and so triggers their reduction: the W
  /// pass where the schedule splits the backward, else the backward.
  bool produces_grads(const PipeOp& op) const {
    return op.kind == (p_.splits_backward() ? PassKind::weight_grad : PassKind::backward);
  }
  /// ZeRO-1/2 with overlapped parameter gathers: the first forward waits for its buckets'.
  bool waits_for_bucket_gather(const PipeOp& op) const {
    return zero_ != 3 && op.forward() && op.micro_batch == 0;
  }
  /// Whether this backward (or W) pass reduces (or reduce-scatters) its gradients: ZeRO-0/1 and
  /// pipelined ZeRO-2/3 in the last micro-batch only (see ParallelSpec).
  bool reduces_in(const PipeOp& op) const {
    return (zero_ >= 2 && p_.reduces_grads_every_micro_batch()) || op.micro_batch == mbs_ - 1;
  }
  /// Whether a pass has ZeRO / DP traffic tied to its individual units (so it cannot run as one
  /// merged task): ZeRO-3 gathers and scatters per unit; the first forward waits for overlapped
  /// parameter gathers; backward passes whose gradients are reduced launch buckets per unit.
  bool unit_traffic(const PipeOp& op) const {
    if (zero_ == 3) return gathers_unit(op) || (produces_grads(op) && reduces_in(op));
    if (op.forward()) return op.micro_batch == 0 && zero_ >= 1 && t_.overlap_param_gather;
    return dp_ranks_ > 1 && produces_grads(op) && reduces_in(op);
  }
  /// ZeRO-1/2: parameters all-gathered bucket by bucket after the optimizer, overlapping the
  /// next step's first forward (else after the optimizer, before the step ends).
  bool gathers_buckets() const { return zero_ == 1 || zero_ == 2; }
  /// Parameters whose optimizer states this rank holds, of the stage's `params`.
  double local_params(double params) const { return params / (zero_ >= 1 ? dp_ranks_ : 1); }
  /// Gradient bucket size: ZeRO-3 reduces per unit; else the configured size or Megatron DDP's
  /// default max(4e7, 1e6·dp).
  double bucket_cap() const {
    if (zero_ == 3) return 0.0;
    return t_.grad_bucket_params > 0 ? t_.grad_bucket_params : std::max(4e7, 1e6 * p_.dp);
  }

 private:
  const TrainingSpec& t_;
  const ParallelSpec& p_;
  int mbs_;
  int dp_ranks_;
  int zero_;
};

}  // namespace clustersim::models
