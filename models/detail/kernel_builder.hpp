#pragma once
// Kernel-op helpers shared by the MoE and MLA kernel programs (models/moe_ops.cpp,
// models/mla_ops.cpp): GEMMs by the shape model, grouped GEMMs, streaming kernels, MLPs.
#include <algorithm>
#include <string>

#include "hardware/gpu_spec.hpp"
#include "hardware/kernel_cost.hpp"
#include "models/detail/layer_ops_recipe.hpp"
#include "models/layer_ops.hpp"

namespace clustersim::models {

struct KernelBuilder {
  const hardware::GpuSpec& gpu;
  hardware::Precision prec;
  TrainingSpec::Ideal ideal{};  ///< the explainer's what-ifs (TrainingSpec::Ideal), as layer_ops honours them
  hardware::GroupedGemmKernel grouped_kernel = hardware::GroupedGemmKernel::cutlass;  ///< routed groups' library
  Fp8Recipe recipe = Fp8Recipe::delayed;  ///< how a low-precision GEMM's operands are quantized
  double micro_batches = 1;               ///< per step, over which once-a-step weight quantization is spread
  bool swiglu_fp8_store = false;  ///< TrainingSpec::activation_fp8_input_store: gated MLPs cast their saved input

  /// The builder of a training job's own kernels: its precision, recipe and what-ifs.
  static KernelBuilder training(const hardware::GpuSpec& gpu, const TrainingSpec& t, const ParallelSpec& p) {
    return {gpu,
            t.precision,
            t.ideal,
            t.moe_grouped_gemm,
            t.fp8_recipe,
            double(std::max(1, t.micro_batches(p))),
            t.activation_fp8_input_store};
  }

  KernelOp gemm(std::string name, double m, double n, double k) const { return grouped(std::move(name), 1, m, n, k); }
  // The same product as a Triton tile on warp-level MMA (fla's scans, mamba_ssm's SSD) rather than
  // a GEMM library's kernel: its body takes hardware::warp_mma_slowdown times as long.
  KernelOp warp_mma_gemm(std::string name, double m, double n, double k) const {
    KernelOp g = gemm(std::move(name), m, n, k);
    g.time_s = gpu.kernel_gap.si() + (g.time_s - gpu.kernel_gap.si()) * gpu.warp_mma_slowdown;
    return g;
  }
  // `groups` GEMMs of [m, k]·[k, n] in one grouped-GEMM launch (one kernel gap). Not routed:
  // each group is costed by the shape model at its own M, so a small M per expert runs at small-M
  // efficiency. Routed (an MoE rank's experts, whose token dimension — M, or K in wgrad when
  // !tokens_in_m — is a random count of that mean): hardware::routed_gemm_cost, one cost for the
  // whole group with expected tile rows and waves. ideal.grouped_gemm: the groups at the rate of
  // one GEMM with their token dimension summed, so only the small-M loss goes.
  KernelOp grouped(std::string name, double groups, double m, double n, double k, bool routed = false,
                   bool tokens_in_m = true) const {
    m = std::max(1.0, m), n = std::max(1.0, n), k = std::max(1.0, k);
    const double flop = groups * 2 * m * n * k;
    const double bytes = groups * ((m * k + k * n) * hardware::gemm_operand_bytes(prec) + m * n * hardware::storage_bytes(prec));
    if (ideal.gemm) return {std::move(name), OpKind::gemm, flop, bytes, flop / peak() + gpu.kernel_gap.si(), hardware::Bound::compute};
    if (ideal.grouped_gemm && groups > 1) {
      const auto c = m <= k ? hardware::gemm_cost(gpu, prec, groups * m, n, k) : hardware::gemm_cost(gpu, prec, m, n, groups * k);
      return {std::move(name), OpKind::gemm, flop, bytes, c.time.si(), c.bound};
    }
    if (routed) {
      const auto c = hardware::routed_gemm_cost(gpu, prec, groups, m, n, k, tokens_in_m, grouped_kernel);
      return {std::move(name), OpKind::gemm, flop, bytes, c.time.si(), c.bound};
    }
    const auto c = hardware::gemm_cost(gpu, prec, m, n, k);
    return {std::move(name), OpKind::gemm, flop, bytes, groups * (c.time.si() - gpu.kernel_gap.si()) + gpu.kernel_gap.si(), c.bound};
  }
  double peak() const { return (gpu.peak(prec).si() > 0 ? gpu.peak(prec) : gpu.peak(hardware::Precision::bf16)).si(); }
  KernelOp memory(std::string name, double bytes) const {
    if (ideal.memory) return {std::move(name), OpKind::memory, 0, bytes, gpu.kernel_gap.si(), hardware::Bound::memory};
    const auto c = hardware::memory_cost(gpu, units::Bytes(bytes));
    return {std::move(name), OpKind::memory, 0, bytes, c.time.si(), c.bound};
  }
  KernelOp attention(std::string name, double flop, double bytes, double seq, bool backward) const {
    if (ideal.attention) return {std::move(name), OpKind::attention, flop, bytes, flop / peak() + gpu.kernel_gap.si(), hardware::Bound::compute};
    const auto c = hardware::attention_cost(gpu, prec, units::Flop(flop), seq, backward);
    return {std::move(name), OpKind::attention, flop, bytes, c.time.si(), c.bound};
  }
  // The recipe's quantization of `groups` tensors of `elements` BF16 values each before a
  // low-precision GEMM (QuantPass, models/detail/layer_ops_recipe.cpp), each kernel at its own
  // size's bandwidth. Transformer Engine's GroupedLinear quantizes every expert's split on its
  // own (split_quantize → multi_tensor_quantize_impl, TE @d0067d0 pytorch/csrc/extensions/
  // cast.cpp; grouped MXFP8 quantization is opt-in from v2.18) except on two fused paths that
  // take all splits in one pass: delayed scaling's multi-tensor cast-transpose and, from v2.11,
  // NVFP4's split quantize.
  KernelOp quantize(std::string name, double groups, double elements) const {
    const QuantPass q = quant_pass(prec, recipe);
    const bool fused =
        prec == hardware::Precision::nvfp4 || (prec == hardware::Precision::fp8 && recipe == Fp8Recipe::delayed);
    const double splits = fused ? 1 : groups;
    const int launches = int(splits * q.launches());
    const double bytes = groups * elements * q.bytes_per_element;
    const double time_s = quant_time(gpu, q, splits, groups * elements / splits).si();
    KernelOp op{std::move(name),         OpKind::memory, 0, bytes, ideal.quantize ? 0.0 : time_s,
                hardware::Bound::memory, launches};
    op.loop_launches = launches - 1;  // one split_quantize call from Python, its kernels from C++
    return op;
  }
  // The weights' quantization, once per optimizer step (TE's is_first_microbatch cache): its
  // share of one micro-batch, with no launch of its own in the micro-batch's host timeline.
  KernelOp weight_quantize(std::string name, double groups, double elements) const {
    return once_per_step(quantize(std::move(name), groups, elements), micro_batches);
  }
  bool quantizes() const { return hardware::is_low_precision(prec); }
  // Y[m,n] = X[m,k]·W[k,n]: forward, and backward dgrad + wgrad; in low precision the recipe's
  // quantization of X, W and dY as in models/layer_ops.cpp.
  void linear(PassCost* fwd, PassCost* bwd, const std::string& name, double m, double n, double k) const {
    if (quantizes()) {
      fwd->add(quantize(name + ".quantize", 1, m * k));
      fwd->add(weight_quantize(name + ".weight_quantize", 1, k * n));
      bwd->add(quantize(name + ".grad_quantize", 1, m * n));
    }
    fwd->add(gemm(name, m, n, k));
    bwd->add(gemm(name + ".dgrad", m, k, n));
    bwd->add(as_weight_grad(gemm(name + ".wgrad", k, n, m), m, n, k));
  }
  // An MLP of `groups` experts on m tokens each: up (gate+up when gated), activation, down;
  // backward dgrad and wgrad of both. In low precision each GEMM's input, weights and output
  // gradient are quantized per group (quantize above). `routed`: m is the mean of random routed
  // counts (grouped(...) above).
  void mlp(PassCost* fwd, PassCost* bwd, const std::string& name, double groups, double m, double h, double f,
           bool is_gated, bool routed = false) const {
    const double up = is_gated ? 2 * f : f, e = hardware::storage_bytes(prec), inner = groups * m * f * e;
    const bool q = quantizes();
    if (q) fwd->add(quantize(name + ".fc1.quantize", groups, m * h));
    if (q) fwd->add(weight_quantize(name + ".fc1.weight_quantize", groups, h * up));
    fwd->add(grouped(name + ".fc1", groups, m, up, h, routed));
    fwd->add(memory(name + ".act", (is_gated ? 3 : 2) * inner));
    // The FP8 copy of the saved SwiGLU input: a cast after fc1, one back before its backward.
    const double fp8_store = is_gated ? swiglu_store_cast_bytes(swiglu_fp8_store, prec, groups * m * up) : 0.0;
    if (fp8_store > 0) fwd->add(memory(name + ".swiglu_in.fp8_store", fp8_store));
    if (q) fwd->add(quantize(name + ".fc2.quantize", groups, m * f));
    if (q) fwd->add(weight_quantize(name + ".fc2.weight_quantize", groups, f * h));
    fwd->add(grouped(name + ".fc2", groups, m, h, f, routed));
    if (q) bwd->add(quantize(name + ".fc2.grad_quantize", groups, m * h));
    bwd->add(grouped(name + ".fc2.dgrad", groups, m, f, h, routed));
    bwd->add(as_weight_grad(grouped(name + ".fc2.wgrad", groups, f, h, m, routed, false), groups * m, h, f));
    if (fp8_store > 0) bwd->add(memory(name + ".swiglu_in.fp8_load", fp8_store));
    bwd->add(memory(name + ".act.bwd", (is_gated ? 5 : 3) * inner));
    if (q) bwd->add(quantize(name + ".fc1.grad_quantize", groups, m * up));
    bwd->add(grouped(name + ".fc1.dgrad", groups, m, h, up, routed));
    bwd->add(as_weight_grad(grouped(name + ".fc1.wgrad", groups, h, up, m, routed, false), groups * m, up, h));
  }
};

}  // namespace clustersim::models
