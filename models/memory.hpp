#pragma once
// Peak memory per GPU over a training step: model states by precision and ZeRO stage, saved
// activations by recompute mode, the logits of the loss, and the runtime's reserve.
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
  bool fits() const { return total_bytes <= capacity_bytes; }
};

/// Accounting (mixed-precision Adam, Megatron-style):
///   weights 2 B/param (bf16/fp16; 4 for fp32/tf32);
///   gradients 4 B/param when reduced in fp32 (Megatron main_grad), else 2;
///   optimizer 12 B/param (fp32 master, Adam m and v; 8 when weights are already fp32),
///   divided by dp for zero_stage ≥ 1.
/// Activations per block per micro-batch are the tensors backward reads (see memory.cpp), in
/// line with Korthikanti et al. 2022 eq. 1 (34·s·b·h + 5·a·s²·b for GPT without flash).
MemoryEstimate estimate_memory(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                               const hardware::GpuSpec& gpu);

}  // namespace clustersim::models
