#include "models/detail/layer_ops_recipe.hpp"

#include <cmath>

#include "hardware/kernel_cost.hpp"

namespace clustersim::models {
namespace {

using hardware::Precision;

// Bytes of the BF16 tensor read by each pass of a quantization kernel.
constexpr double kBf16 = 2.0;
// The one value a scalar kernel reads or writes (an FP32 amax or scale).
constexpr double kFp32 = 4.0;

}  // namespace

// One operand's quantization for the low-precision GEMMs that use it in both orientations (X
// for fwd and wgrad, dY for dgrad and wgrad, W for fwd and dgrad). `o` = bytes written per
// element per orientation, block scales included (hardware::gemm_operand_bytes).
//   delayed (TE DelayedScaling): the scale comes from the amax history, so one fused
//     cast-transpose kernel reads the tensor once, writes both orientations and records the
//     amax on the way (TE cast_transpose_fused): 2 + 2o, 1 kernel.
//   tensorwise (TE Float8CurrentScaling, torchao tensorwise): the scale needs this tensor's
//     amax first, a full read of its own, then the cast-transpose: 2 + 2 + 2o, 2 kernels, and
//     2 one-thread kernels between them: TE's Float8CurrentScalingQuantizer::quantize_impl
//     (pytorch/csrc/quantizer.cpp, v2.8 and @d0067d0) zeroes the amax (zero_amax_kernel in
//     common/recipe/current_scaling.cu) before the amax pass and turns it into the scale
//     (nvte_compute_scale_from_amax) before the cast; torchao's amax_to_scale is a separate
//     op too.
//   rowwise (torchao): scales along K for one orientation (amax fused with the cast, a row
//     fits an SM) and along M for the other, whose reduction runs across rows and so is a
//     separate read before its cast: 2 + o + 2 + 2 + o, 3 kernels.
//   blockwise (1x128 tiles) and mxfp8 (32-element blocks): the scale is local to a block, so
//     one kernel quantizes both orientations in one read (TE's fused MXFP8 / block quantize):
//     2 + 2o, 1 kernel.
//   nvfp4 (NVIDIA's NVFP4 recipe, TE NVFP4BlockScaling): a per-tensor FP32 scale above the
//     E4M3 block scales needs a global amax pass first: 2 + 2 + 2o, 2 kernels.
QuantPass quant_pass(Precision p, Fp8Recipe r) {
  const double o = hardware::gemm_operand_bytes(p);
  if (p == Precision::nvfp4) return {kBf16 + kBf16 + 2 * o, 2};
  if (p == Precision::mxfp8) return {kBf16 + 2 * o, 1};
  switch (r) {
    case Fp8Recipe::delayed: return {kBf16 + 2 * o, 1};
    case Fp8Recipe::tensorwise:
      return {kBf16 + kBf16 + 2 * o, 2, 2};
    case Fp8Recipe::rowwise: return {3 * kBf16 + 2 * o, 3};
    case Fp8Recipe::blockwise: {
      // One FP32 scale per 128 elements, per orientation (DeepSeek-V3 §3.3.2).
      const double scales = 2 * 4.0 / 128;
      return {kBf16 + 2 * o + scales, 1};
    }
  }
  return {};
}

units::Seconds quant_time(const hardware::GpuSpec& gpu, const QuantPass& q, double splits, double elements) {
  if (q.kernels <= 0) return units::Seconds{};
  const double per_kernel = elements * q.bytes_per_element / q.kernels;
  const units::Seconds stream = hardware::memory_cost(gpu, units::Bytes(per_kernel)).time * double(q.kernels);
  const units::Seconds scalar = hardware::memory_cost(gpu, units::Bytes(kFp32)).time * double(q.scalar_kernels);
  return (stream + scalar) * splits;
}

KernelOp once_per_step(KernelOp op, double micro_batches) {
  op.time_s /= micro_batches, op.bytes /= micro_batches;
  op.kernels = 0, op.loop_launches = 0;
  return op;
}

double swiglu_store_cast_bytes(bool fp8_store, Precision p, double elements) {
  return fp8_store ? elements * (hardware::storage_bytes(p) + 1.0) : 0.0;
}

bool auto_filter_keeps_bf16(Fp8Recipe r, double n, double k) {
  // torchao float8_linear_utils.py @36027d82 (_auto_filter_for_rowwise/_tensorwise), on the
  // nn.Linear weight (N = out_features, K = in_features), thresholds from H100 benchmarks:
  // rowwise keeps BF16 when N <= 2048, or K <= 1024, or (N <= 4096 and K <= 2048); tensorwise
  // when K <= 4096 and N <= 1024. Both require K and N divisible by 16. The other recipes use
  // the tensorwise rule (per-tensor scales cost alike).
  if (std::fmod(n, 16.0) != 0 || std::fmod(k, 16.0) != 0) return true;
  if (r == Fp8Recipe::rowwise) return n <= 2048 || k <= 1024 || (n <= 4096 && k <= 2048);
  return k <= 4096 && n <= 1024;
}

LinearRecipe linear_recipe(const TrainingSpec& t, double out_features, double in_features) {
  LinearRecipe lr;
  const Precision p = t.precision;
  if (!hardware::is_low_precision(p)) {
    lr.gemm = p;
    return lr;
  }
  if (t.fp8_auto_filter && auto_filter_keeps_bf16(t.fp8_recipe, out_features, in_features)) return lr;
  lr.gemm = p;
  lr.activation = lr.gradient = lr.weight = quant_pass(p, t.fp8_recipe);
  return lr;
}

Precision attention_precision(const TrainingSpec& t) {
  if (t.fp8_attention) return Precision::fp8;
  // The attention kernels run in the 16-bit type around the GEMMs (FP16 under fp16 training).
  return t.precision == Precision::fp16 ? Precision::fp16
         : t.precision == Precision::fp32 || t.precision == Precision::tf32 ? t.precision
                                                                             : Precision::bf16;
}

}  // namespace clustersim::models
