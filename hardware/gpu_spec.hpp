#pragma once
// GPU and node specifications. Plain aggregates filled by the scenario loader from
// hardware/profiles/*.yaml; every calibrated constant there cites its source.
#include <array>
#include <string>

namespace clustersim::hardware {

enum class Precision { fp32, tf32, bf16, fp16, fp8 };
inline constexpr std::array<const char*, 5> kPrecisionNames = {"fp32", "tf32", "bf16", "fp16", "fp8"};
inline const char* name(Precision p) { return kPrecisionNames[static_cast<std::size_t>(p)]; }

/// Bytes per element of activations/weights stored in this precision (fp8 GEMM inputs are
/// 1 byte; everything around them stays 2 bytes, as in Transformer Engine).
inline double storage_bytes(Precision p) {
  switch (p) {
    case Precision::fp32: case Precision::tf32: return 4.0;
    default: return 2.0;
  }
}
inline double gemm_operand_bytes(Precision p) {
  return p == Precision::fp8 ? 1.0 : storage_bytes(p);
}

/// A GEMM efficiency anchor: the best measured throughput ("MAMF") and the shape it was
/// measured at, from which the per-SM main-loop efficiency is derived (kernel_cost.cpp).
struct GemmAnchor {
  double flops = 0;  ///< FLOP/s achieved
  double m = 0, n = 0, k = 0;
};

/// FlashAttention-style kernel efficiency as a fraction of the dense peak, rising with the
/// sequence length: eff(s) = max · s / (s + half_seq).
struct AttentionEfficiency {
  double fwd_max = 0.6, fwd_half_seq = 256;
  double bwd_max = 0.5, bwd_half_seq = 400;
};

/// The machine a GPU usually ships in: the name of a topology preset (topologies/presets/),
/// used when a scenario names no network. Link rates, NICs and NCCL latencies live in the
/// topology only (topologies/), never in a hardware profile.
struct NodeSpec {
  std::string default_topology;
};

struct GpuSpec {
  std::string name;
  std::string description;
  int sms = 0;
  std::array<double, 5> peak_flops{};  ///< dense Tensor Core FLOP/s by Precision (fp32: vector)
  double hbm_bytes = 0;
  double hbm_bps = 0;
  double l2_bytes = 0;
  GemmAnchor gemm_anchor;          ///< BF16/FP16 MAMF
  GemmAnchor gemm_anchor_fp8;      ///< FP8 MAMF (flops = 0: no FP8)
  int gemm_tile_m = 128, gemm_tile_n = 256;
  double gemm_k_overhead = 0;      ///< per-tile prologue/epilogue cost, in K elements
  double hbm_efficiency = 0.9;     ///< achieved / spec for streaming kernels
  AttentionEfficiency attention;
  /// Fractions of the anchors' rates that a training run sustains, for GEMMs (the MAMF anchor)
  /// and for attention kernels (the FlashAttention curve): clocks under hours of full power
  /// draw versus the short benchmarks behind the anchors, real shapes (causal masks, head
  /// dimensions, training GEMM shapes) versus the benchmarks' best. Fitted to the published runs
  /// (tools/calibrate.cpp); 1 = the anchors as measured.
  double gemm_sustained_fraction = 1.0;
  double attention_sustained_fraction = 1.0;
  double kernel_gap_s = 0;         ///< GPU-side idle between dependent kernels
  int comm_sms = 16;               ///< SMs a NCCL collective occupies while it runs
  double runtime_reserved_bytes = 0;  ///< CUDA context, NCCL and library workspaces
  NodeSpec node;

  double peak(Precision p) const { return peak_flops[static_cast<std::size_t>(p)]; }
};

}  // namespace clustersim::hardware
