#pragma once
// How the model is trained: parallel layout, batch, precision, recompute.
#include <string>

#include "hardware/gpu_spec.hpp"

namespace clustersim::models {

enum class Recompute { none, selective, full };
enum class FlopsFormula { megatron, palm };

struct ParallelSpec {
  int tp = 1;
  int pp = 1;
  int cp = 1;
  int dp = 1;
  int zero_stage = 0;   ///< 0: all-reduce; 1: optimizer states sharded over DP
};

struct TrainingSpec {
  int seq_len = 2048;
  int global_batch = 1;        ///< sequences per optimizer step
  int micro_batch = 1;         ///< sequences per micro-batch per rank
  hardware::Precision precision = hardware::Precision::bf16;
  Recompute recompute = Recompute::none;
  bool flash_attention = true;
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;  ///< ZeRO ≥ 1: parameter all-gather overlapped with forward
  /// Megatron-LM reduces gradients in fp32 when training in bf16
  /// (arguments.py: bf16 ⇒ accumulate_allreduce_grads_in_fp32).
  bool grad_reduce_fp32 = true;
  double grad_bucket_params = 0;     ///< 0: Megatron default max(4e7, 1e6·dp)
  double tokens = 0;                 ///< training budget (tokens) for days-to-train
  FlopsFormula flops_formula = FlopsFormula::megatron;

  int micro_batches(const ParallelSpec& p) const { return global_batch / (micro_batch * p.dp); }
};

inline const char* name(Recompute r) {
  return r == Recompute::none ? "none" : r == Recompute::selective ? "selective" : "full";
}

}  // namespace clustersim::models
