#pragma once
// Peak memory per GPU over a training step: model states by precision and ZeRO stage, saved
// activations by recompute mode, the logits of the loss, and the runtime's reserve.
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "models/model_spec.hpp"
#include "models/training_spec.hpp"

namespace clustersim::models {

struct MemoryEstimate {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;   ///< saved for backward, peak over the step
  double logits_bytes = 0;        ///< logits + fp32 softmax during the loss
  double reserved_bytes = 0;      ///< CUDA context, NCCL buffers, workspaces
  double total_bytes = 0;
  double capacity_bytes = 0;
  int stage = 0;                  ///< pipeline stage this estimate is for
  int layers_in_flight = 0;       ///< block activations held at the peak (layers × micro-batches)
  /// Schedules that split the backward (zb-h1): a block's saved bytes from its forward to its B
  /// pass, and what it keeps from B to its W pass (models/memory_wgrad.hpp); else 0. With
  /// training.activation_offload_layers, block_saved_bytes is what an offloaded block copies.
  double block_saved_bytes = 0, block_kept_for_w_bytes = 0;
  bool fits() const { return total_bytes <= capacity_bytes; }
};

/// Accounting per pipeline stage (mixed-precision Adam, Megatron-style), for the parameters the
/// stage holds (its blocks / tp, the padded embedding on the first stage, the LM head and final
/// norm on the last; with tied embeddings and pp > 1 the last stage keeps its own copy):
///   weights 2 B/param (bf16/fp16; 4 for fp32/tf32), ÷ (dp·cp) for ZeRO-3, plus the two
///     blocks gathered at a time (the current one and the prefetched one);
///   gradients 4 B/param when reduced in fp32 (Megatron main_grad), else 2, ÷ (dp·cp) for
///     ZeRO ≥ 2, plus the full gradients of the two blocks being produced/reduced;
///   optimizer 12 B/param (fp32 master, Adam m and v; 8 when weights are already fp32),
///     ÷ (dp·cp) for ZeRO ≥ 1.
/// Activations per block per micro-batch are the tensors backward reads (see memory.cpp), in
/// line with Korthikanti et al. 2022 eq. 1 (34·s·b·h + 5·a·s²·b for GPT without flash; the
/// norm/dropout part ÷ tp with sequence parallelism), times the block-micro-batches in flight at
/// the peak of the stage's pipeline schedule (1F1B: pp − stage micro-batches on stage 0).
std::vector<MemoryEstimate> estimate_memory_per_stage(const ModelSpec& m, const TrainingSpec& t,
                                                      const ParallelSpec& p, const hardware::GpuSpec& gpu);

/// The stage with the largest total (first on ties) of estimate_memory_per_stage()'s result.
MemoryEstimate largest_stage(const std::vector<MemoryEstimate>& stages);

/// The stage with the largest total (first on ties).
MemoryEstimate estimate_memory(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                               const hardware::GpuSpec& gpu);

}  // namespace clustersim::models
