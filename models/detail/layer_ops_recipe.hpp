#pragma once
// Low-precision training recipes: which linears run in low precision, and the memory-bound
// quantization kernels each recipe adds around a low-precision GEMM (docs/recipes.md).
#include "hardware/gpu_spec.hpp"
#include "models/layer_ops.hpp"
#include "models/training_spec.hpp"
#include "units/units.hpp"

namespace clustersim::models {

/// The quantization work one recipe does for one GEMM operand of `elements` BF16 values.
struct QuantPass {
  double bytes_per_element = 0;  ///< HBM traffic of all its kernels, per element
  int kernels = 0;               ///< launches that stream the tensor
  int scalar_kernels = 0;        ///< one-thread launches on its scale (TE current scaling)
  int launches() const { return kernels + scalar_kernels; }
};

/// The quantization `r` does for one operand of a GEMM in precision `p` (low precision only).
QuantPass quant_pass(hardware::Precision p, Fp8Recipe r);

/// GPU time of `q` over `splits` tensors of `elements` BF16 values each, one quantizer call per
/// tensor: each streaming kernel at its own size's bandwidth, each scalar kernel at the latency
/// floor of a kernel that touches one FP32 value.
units::Seconds quant_time(const hardware::GpuSpec& gpu, const QuantPass& q, double splits, double elements);

/// A weight quantization made once per optimizer step (TE's is_first_microbatch cache, torchao's
/// weight cache) as one micro-batch's share: time and bytes over `micro_batches`, and no launch
/// of its own in the micro-batch's host timeline.
KernelOp once_per_step(KernelOp op, double micro_batches);

/// Bytes one cast of a SwiGLU's saved input moves under training.activation_fp8_input_store:
/// `elements` read in the activation dtype of precision `p` and written in FP8 (or back, before
/// the activation's backward; Megatron-Core fused_bias_swiglu.py input.to(float8_e4m3fn)); 0
/// when `fp8_store` is off.
double swiglu_store_cast_bytes(bool fp8_store, hardware::Precision p, double elements);

/// The precision the GEMMs run in: the training precision, BF16 for a linear the stack keeps in
/// high precision, FP16/BF16 unchanged.
struct LinearRecipe {
  hardware::Precision gemm = hardware::Precision::bf16;
  QuantPass activation;  ///< X before the forward GEMM (both orientations: fwd and wgrad)
  QuantPass gradient;    ///< dY before dgrad/wgrad (both orientations)
  QuantPass weight;      ///< W once per optimizer step (W and Wᵀ), amortized over micro-batches
};

/// The recipe for a linear layer with `out_features` × `in_features` weights (whole module,
/// before tensor-parallel sharding, as the converters see it).
LinearRecipe linear_recipe(const TrainingSpec& t, double out_features, double in_features);

/// torchao's auto-filter (float8_linear_utils.py @36027d82): true if the stack keeps this
/// linear in BF16.
bool auto_filter_keeps_bf16(Fp8Recipe r, double out_features, double in_features);

/// The precision the attention kernels run in.
hardware::Precision attention_precision(const TrainingSpec& t);

}  // namespace clustersim::models
