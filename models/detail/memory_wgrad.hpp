#pragma once
// What a block keeps alive between its B and W passes when the schedule splits the backward
// (ParallelSpec::splits_backward): the inputs X and the output gradients dY its wgrad GEMMs
// (dW = Xᵀ·dY) read. Qi et al., "Zero Bubble Pipeline Parallelism" (arXiv 2401.10241, Table 1)
// count the same for GPT: M_W = 32·b·s·h (X and dY of the four linears in 2-byte elements)
// against M_B = 34·b·s·h + 5·a·s²·b for the whole block.
#include <array>

#include "hardware/gpu_spec.hpp"
#include "models/model_spec.hpp"
#include "models/training_spec.hpp"

namespace clustersim::models {

/// Bytes layer `layer` (an MTP module's block: layers + j) keeps from its B pass to its W pass
/// per micro-batch on one rank, in the bytes the linears keep of their inputs (the quantized copy
/// in FP8/MXFP8 with Transformer Engine: TrainingSpec::saved_linear_input_bytes). With sequence
/// parallelism X of a column-parallel GEMM is the gathered sequence (the W pass reads it whole).
class WgradKept {
 public:
  WgradKept(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu);
  double bytes(int layer) const;

 private:
  const ModelSpec& m_;
  double attention_ = 0, mla_ = 0, dense_mlp_ = 0, moe_mlp_ = 0;
  std::array<double, kCompressedKinds> v4_{};  // DeepSeek-V4: window-only, CSA and HCA attention
};

}  // namespace clustersim::models
