#pragma once
// GPU and node specifications. Plain aggregates filled by the scenario loader from
// hardware/profiles/*.yaml; every calibrated constant there cites its source.
#include <array>
#include <string>
#include <vector>

#include "units/units.hpp"

namespace clustersim::hardware {

enum class Precision { fp32, tf32, bf16, fp16, fp8, mxfp8, nvfp4 };

/// One row of the open precision table. Storage: activations/weights kept around the GEMMs
/// (low-precision GEMM inputs are quantized copies; everything else stays BF16, as in
/// Transformer Engine and torchao). Operand: bytes per GEMM input element, block scales included:
/// MXFP8 has one E8M0 byte per 32 elements, NVFP4 one E4M3 byte per 16 FP4 elements (OCP MX
/// spec v1.0; NVIDIA Blackwell NVFP4 format).
struct PrecisionInfo {
  const char* name;
  double storage_bytes;
  double operand_bytes;
  int scale_block;  ///< elements per scale factor (0: per-tensor or none)
};
inline constexpr std::array<PrecisionInfo, 7> kPrecisions = {{
    {"fp32", 4.0, 4.0, 0},
    {"tf32", 4.0, 4.0, 0},
    {"bf16", 2.0, 2.0, 0},
    {"fp16", 2.0, 2.0, 0},
    {"fp8", 2.0, 1.0, 0},
    {"mxfp8", 2.0, 1.0 + 1.0 / 32, 32},
    {"nvfp4", 2.0, 0.5 + 1.0 / 16, 16},
}};
inline constexpr std::array<const char*, 7> kPrecisionNames = {"fp32", "tf32", "bf16", "fp16",
                                                                "fp8",  "mxfp8", "nvfp4"};
inline const PrecisionInfo& info(Precision p) { return kPrecisions[static_cast<std::size_t>(p)]; }
inline const char* name(Precision p) { return info(p).name; }
inline double storage_bytes(Precision p) { return info(p).storage_bytes; }
inline double gemm_operand_bytes(Precision p) { return info(p).operand_bytes; }
inline bool is_low_precision(Precision p) {
  return p == Precision::fp8 || p == Precision::mxfp8 || p == Precision::nvfp4;
}

/// Attention kernel implementations with measured rows in reference/kernels/kernel_attention.csv
/// (sdpa_math: PyTorch's math fallback; unfused: QKᵀ and PV as batched GEMMs plus a softmax;
/// flash1: FlashAttention v1, the kernel generation 2022–mid-2023 stacks ran).
enum class AttentionImpl { cudnn, flash2, flash3, flash4, sdpa_math, unfused, flash1 };
inline constexpr std::array<const char*, 7> kAttentionImplNames = {"cudnn",  "flash2",    "flash3",
                                                                   "flash4", "sdpa_math", "unfused",
                                                                   "flash1"};
inline const char* name(AttentionImpl a) { return kAttentionImplNames[static_cast<std::size_t>(a)]; }

/// The grouped-GEMM kernel an MoE rank's experts run in low precision (training.moe_grouped_gemm).
/// cutlass: the CUTLASS/cuBLAS-class grouped kernels of Transformer Engine's GroupedLinear and
/// torch._scaled_grouped_mm; deepgemm: DeepSeek's DeepGEMM (sm90, FP8 with 1x128/128x128 block
/// scales), whose contiguous-layout grouped kernel is its dense kernel over M-concatenated groups.
enum class GroupedGemmKernel { cutlass, deepgemm };
inline constexpr std::array<const char*, 2> kGroupedGemmKernelNames = {"cutlass", "deepgemm"};
inline const char* name(GroupedGemmKernel k) { return kGroupedGemmKernelNames[static_cast<std::size_t>(k)]; }

/// A GEMM efficiency anchor: the best measured throughput ("MAMF") and the shape it was
/// measured at, from which the per-SM main-loop efficiency is derived (kernel_cost.cpp).
struct GemmAnchor {
  units::FlopPerSecond rate{};  ///< achieved
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

/// The largest compute_sustained_fraction (GpuSpec): the calibration's upper bound
/// (studies/calibrate.cpp) and the profile loader's range (scenarios/load.cpp). Above 1: a
/// cluster may lose less in a step than the in-step ratio measured on attention.
inline constexpr double kMaxComputeSustainedFraction = 1.3;

/// CPU time for PyTorch to issue one op (a module call and its kernel launch) on an x86 host:
/// torch.nn.Linear forward on a DGX H100's Xeon Platinum 8480C, 13.48 us (hardware/kernels/
/// host_op_cost.csv, TransformerEngine #2053). The default of every profile whose node has an x86
/// host; a profile of a node with another host CPU sets `host_launch` from its own row.
inline constexpr double kX86HostLaunchS = 13.48e-6;

struct GpuSpec {
  std::string name;
  std::string description;
  /// The GPU die (gh100, gb100, ...): profiles of one die share the fitted constant (studies/
  /// calibrate.cpp), so a part with more memory or power never predicts slower for the fit alone.
  std::string die;
  int sms = 0;
  std::array<units::FlopPerSecond, 7> peak_flops{};  ///< dense Tensor Core rate by Precision (fp32: vector)
  units::Bytes hbm_capacity{};
  units::BytesPerSecond hbm_bandwidth{};
  units::Bytes l2_capacity{};
  GemmAnchor gemm_anchor;          ///< BF16/FP16 MAMF
  GemmAnchor gemm_anchor_fp8;      ///< FP8 MAMF (rate 0: no FP8)
  GemmAnchor gemm_anchor_nvfp4;    ///< best measured NVFP4 GEMM (rate 0: FP8 anchor × peak ratio)
  int gemm_tile_m = 128, gemm_tile_n = 256;
  double gemm_k_overhead = 0;      ///< per-tile prologue/epilogue cost, in K elements
  double hbm_efficiency = 0.9;     ///< achieved / spec for streaming kernels
  AttentionEfficiency attention;
  AttentionImpl default_attention = AttentionImpl::flash2;  ///< what current stacks run here
  /// Data GPUs (the `gpu` column of hardware/kernels/attention.csv) whose attention rows stand
  /// for this GPU, in order of preference; rates scale by this GPU's BF16 peak over theirs.
  /// Empty: no rows, the `attention` curve above is used.
  std::vector<std::string> attention_data;
  /// Warp-level-MMA kernels (Triton tiles, FlashAttention-2) over the GEMM shape model on this GPU,
  /// from its FlashAttention-2 rows (hardware::warp_mma_slowdown; derived when the profile loads).
  double warp_mma_slowdown = 1.0;
  /// Data GPUs (the `device` column of hardware/kernels/ep_kernels.csv) whose DeepEP / HybridEP
  /// rows stand for this GPU, in order of preference. Empty: no rows, the links alone bound them.
  std::vector<std::string> ep_kernel_data;
  /// Rate of a typical well-shaped GEMM over the best-shape MAMF anchor: the MAMF is the best of a
  /// brute-force shape search (a library kernel choice at its best), fitted on kernel rows
  /// (kernel_cost.cpp, docs/kernels.md). 1 = every shape as good as the anchor.
  double gemm_shape_fraction = 0.9;
  units::Seconds memory_latency{};  ///< fixed time of a streaming kernel (ramp + tail), fitted per GPU
  /// Sustained / benchmark clock under full training load (power cap); multiplies every compute
  /// rate. 1 where the anchors were measured under sustained load (MAMF: 100 iterations after
  /// 50 warm-up) and nothing caps the power below the benchmark's.
  double sustained_clock_ratio = 1.0;
  double power_w = 0;              ///< board power limit (TGP) of this configuration
  /// Rate of a compute kernel inside a training step over the same kernel benchmarked alone:
  /// sustained clocks on a node at full power for hours, NCCL and other streams sharing the SMs,
  /// L2 and power budget, and stream gaps the step spreads over its kernels. Measured, not fitted
  /// (kernel_attention.csv in-step rows over isolated rows of the same kernel and shape); the
  /// profile says which rows. 1 = the kernels run as fast as in their microbenchmarks.
  double in_step_rate_ratio = 1.0;
  /// The profile's one fitted scalar (issue 13 item 9): the share of the microbenchmarked GEMM and
  /// attention rates a training step sustains beyond the modelled clocks, shapes and overheads.
  /// Fitted to the published runs by studies/calibrate.cpp (own value from 10 headline rows,
  /// else the global one); 1 = the kernels as measured.
  double compute_sustained_fraction = 1.0;
  units::Seconds kernel_gap{};     ///< GPU-side idle between dependent kernels
  units::Seconds host_launch{kX86HostLaunchS};  ///< CPU time to issue one op from PyTorch (eager)
  int comm_sms = 16;               ///< SMs a NCCL collective occupies while it runs
  units::Bytes runtime_reserved{};  ///< CUDA context, NCCL and library workspaces
  NodeSpec node;

  units::FlopPerSecond peak(Precision p) const { return peak_flops[static_cast<std::size_t>(p)]; }
};

}  // namespace clustersim::hardware
