#pragma once
// Cost functions for the kernels of a training step on one GPU. Pure functions over typed SI
// quantities (units::Seconds, Flop, Bytes); GEMM shapes are element counts. Agreed API between
// the kernel models (hardware/) and their callers (models/layer_ops*): later changes replace the
// physics behind these signatures only.
#include "hardware/gpu_spec.hpp"

namespace clustersim::hardware {

enum class Bound { compute, memory, latency };
enum class KernelPass { forward, backward };

struct KernelCost {
  units::Seconds time{};
  Bound bound = Bound::compute;
  const char* grounded_by = "";  ///< the data behind the rate (static string, for the explainer)
};

/// One attention kernel call, FlashAttention FLOP convention.
struct AttentionShape {
  double batch = 1;              ///< sequences (micro-batch)
  int heads = 0, kv_heads = 0;   ///< query heads and K/V heads on this rank
  int head_dim_qk = 0, head_dim_v = 0;
  double seq_q = 0, seq_kv = 0;  ///< tokens (a CP ring step: seq_q = chunk, seq_kv = chunk)
  bool causal = true;
  double window = 0;             ///< sliding window in tokens, 0 = none
};

/// FLOP of one attention call in the FlashAttention convention (the one every row of
/// kernel_attention.csv uses): forward 2·B·H·Sq·Skv·(Dqk + Dv) (= 4·B·H·S²·D), over the unmasked
/// (query, key) pairs only (causal: half the square); backward 2.5× forward.
units::Flop attention_flop(const AttentionShape& s, KernelPass pass);

/// A rate measured on data GPU `data_gpu` (a row of the attention tables), as this profile runs
/// it: scaled by the dense BF16 peaks, the sustained clock, the in-step ratio and the sustained
/// fraction. 0 when the data GPU's peak is unknown or nothing was measured.
units::FlopPerSecond attention_rate_on(const GpuSpec& gpu, const std::string& data_gpu, units::FlopPerSecond measured);

/// One fused attention call (forward or backward) by implementation and precision.
KernelCost attention_cost(const GpuSpec& gpu, AttentionImpl impl, Precision p, KernelPass pass,
                          const AttentionShape& shape);

/// Legacy: matrix work of `flop` on sequences of `seq_len` at the default implementation's
/// rate (the unfused path's QKᵀ / PV matmuls until their callers move to attention_cost).
KernelCost attention_cost(const GpuSpec& gpu, Precision p, units::Flop flop, double seq_len,
                          bool backward);

/// The implementation current training stacks run on this GPU (named, with why, in the profile).
AttentionImpl default_attention_impl(const GpuSpec& gpu);

/// C[M,N] = A[M,K]·B[K,N] with shape-dependent efficiency.
KernelCost gemm_cost(const GpuSpec& gpu, Precision p, double m, double n, double k);

/// The grouped GEMM of one MoE rank's `groups` local experts in one launch: each C[m,n] =
/// A[m,k]·B[k,n] with the token dimension (m when `tokens_in_m`, else k: wgrad) a random routed
/// count of mean `m` (or `k`). Tile rows and the group's waves are expectations (a last row or
/// wave half full on average), so the cost is continuous in the routing's load imbalance.
/// `kernel`: the grouped kernel's library (GroupedGemmKernel), which sets its low-precision efficiency.
KernelCost routed_gemm_cost(const GpuSpec& gpu, Precision p, double groups, double m, double n, double k, bool tokens_in_m,
                            GroupedGemmKernel kernel = GroupedGemmKernel::cutlass);

/// A streaming (element-wise, norm, softmax, cast, optimizer) kernel moving `bytes` through HBM,
/// at a bandwidth that depends on its size.
KernelCost memory_cost(const GpuSpec& gpu, units::Bytes bytes);

/// The per-SM main-loop efficiency implied by an anchor (fraction of per-SM peak).
double gemm_mainloop_efficiency(const GpuSpec& gpu, Precision p);

}  // namespace clustersim::hardware
