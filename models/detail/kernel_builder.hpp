#pragma once
// Kernel-op helpers shared by the MoE and MLA kernel programs (models/moe_ops.cpp,
// models/mla_ops.cpp): GEMMs by the shape model, grouped GEMMs, streaming kernels, MLPs.
#include <algorithm>
#include <string>

#include "hardware/gpu_spec.hpp"
#include "hardware/kernel_cost.hpp"
#include "models/layer_ops.hpp"

namespace clustersim::models {

struct KernelBuilder {
  const hardware::GpuSpec& gpu;
  hardware::Precision prec;
  TrainingSpec::Ideal ideal{};  ///< the explainer's what-ifs (TrainingSpec::Ideal), as layer_ops honours them
  hardware::GroupedGemmKernel grouped_kernel = hardware::GroupedGemmKernel::cutlass;  ///< routed groups' library

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
  // Y[m,n] = X[m,k]·W[k,n]: forward, and backward dgrad + wgrad; FP8 casts of X and dY as in
  // models/layer_ops.cpp.
  void linear(PassCost* fwd, PassCost* bwd, const std::string& name, double m, double n, double k) const {
    const bool fp8 = prec == hardware::Precision::fp8;
    if (fp8) fwd->add(memory(name + ".cast_fp8", m * k * 4.0));
    fwd->add(gemm(name, m, n, k));
    if (fp8) bwd->add(memory(name + ".grad_cast_fp8", m * n * 4.0));
    bwd->add(gemm(name + ".dgrad", m, k, n));
    bwd->add(as_weight_grad(gemm(name + ".wgrad", k, n, m), m, n, k));
  }
  // An MLP of `groups` experts on m tokens each: up (gate+up when gated), activation, down;
  // backward dgrad and wgrad of both. FP8 casts as in layer_ops (input and output gradient).
  // `routed`: m is the mean of random routed counts (grouped(...) above).
  void mlp(PassCost* fwd, PassCost* bwd, const std::string& name, double groups, double m, double h, double f,
           bool is_gated, bool routed = false) const {
    const double up = is_gated ? 2 * f : f, e = hardware::storage_bytes(prec), inner = groups * m * f * e;
    const bool fp8 = prec == hardware::Precision::fp8;
    if (fp8) fwd->add(memory(name + ".fc1.cast_fp8", groups * m * h * 4.0));
    fwd->add(grouped(name + ".fc1", groups, m, up, h, routed));
    fwd->add(memory(name + ".act", (is_gated ? 3 : 2) * inner));
    if (fp8) fwd->add(memory(name + ".fc2.cast_fp8", groups * m * f * 4.0));
    fwd->add(grouped(name + ".fc2", groups, m, h, f, routed));
    if (fp8) bwd->add(memory(name + ".fc2.grad_cast_fp8", groups * m * h * 4.0));
    bwd->add(grouped(name + ".fc2.dgrad", groups, m, f, h, routed));
    bwd->add(as_weight_grad(grouped(name + ".fc2.wgrad", groups, f, h, m, routed, false), groups * m, h, f));
    bwd->add(memory(name + ".act.bwd", (is_gated ? 5 : 3) * inner));
    if (fp8) bwd->add(memory(name + ".fc1.grad_cast_fp8", groups * m * up * 4.0));
    bwd->add(grouped(name + ".fc1.dgrad", groups, m, h, up, routed));
    bwd->add(as_weight_grad(grouped(name + ".fc1.wgrad", groups, h, up, m, routed, false), groups * m, up, h));
  }
};

}  // namespace clustersim::models
