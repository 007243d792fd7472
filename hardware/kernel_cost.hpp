#pragma once
// Roofline cost functions for the kernels of a training step on one GPU. Pure functions,
// SI units (seconds, FLOP, bytes).
#include "hardware/gpu_spec.hpp"

namespace clustersim::hardware {

enum class Bound { compute, memory, latency };

struct KernelCost {
  double time_s = 0;
  Bound bound = Bound::compute;
};

/// C[M,N] = A[M,K]·B[K,N]. Output tiles of gemm_tile_m × gemm_tile_n are spread over the SMs in
/// waves; a partial last wave costs a full one (wave quantization). Each tile costs
/// 2·tm·tn·(K + k_overhead) FLOP at the per-SM main-loop rate, derived from the profile's MAMF
/// anchor so that the model reproduces that measurement at its shape. The result is the
/// larger of that and the HBM time for A, B and C, plus the kernel gap. GEMMs run at
/// gemm_sustained_fraction of the anchor's rate, attention at attention_sustained_fraction.
KernelCost gemm_cost(const GpuSpec& gpu, Precision p, double m, double n, double k);

/// A streaming (element-wise, norm, softmax, optimizer) kernel moving `bytes` through HBM.
KernelCost memory_cost(const GpuSpec& gpu, double bytes);

/// A fused attention kernel doing `flop` of matrix work on sequences of `seq_len`.
KernelCost attention_cost(const GpuSpec& gpu, Precision p, double flop, double seq_len,
                          bool backward);

/// The per-SM main-loop efficiency implied by an anchor (fraction of per-SM peak).
double gemm_mainloop_efficiency(const GpuSpec& gpu, Precision p);

}  // namespace clustersim::hardware
