#pragma once
// Attention kernel rates interpolated from measured rows (hardware/kernels/attention.csv, copied
// with their sources from reference/kernels/kernel_attention.csv by make_attention_csv.py).
#include <string>
#include <vector>

#include "hardware/gpu_spec.hpp"

namespace clustersim::hardware {

/// One attention-rate request: which rows to read and where on the curve.
struct AttentionQuery {
  AttentionImpl impl = AttentionImpl::flash2;
  const char* dtype = "bf16";  ///< bf16 | fp8 | mxfp8
  bool backward = false;
  bool causal = true;
  double head_dim = 128;
  double seq = 4096;
};

/// The measured rate (FlashAttention FLOP convention) for `q` on data GPU `data_gpu`, or 0
/// when that GPU has no rows for the implementation. `how` names the rows used; `first_seq`, when
/// given, receives the shortest measured length of the curve used (below it the rate is the
/// first point's, held flat). A curve measured at another head width is scaled by the rate ratio
/// of the two widths, from `data_gpu`'s rows or else from `siblings` (the profile's attention_data).
units::FlopPerSecond measured_attention_rate(const std::string& data_gpu, const AttentionQuery& q, const char** how,
                                             double* first_seq = nullptr,
                                             const std::vector<std::string>& siblings = {});

/// Dense BF16 peak of a data GPU (the `gpu` column of attention.csv), to scale its rates to
/// another GPU of the same architecture; 0 when unknown.
units::FlopPerSecond attention_data_peak(const std::string& data_gpu);

/// How much slower than the GEMM shape model a kernel built on warp-level MMA tiles runs on a GPU
/// whose attention rows are `attention_data` (in order): Triton's tl.dot tiles in fla's chunked
/// scans and mamba_ssm's SSD, like FlashAttention-2's mma.sync. Measured by FlashAttention-2 itself:
/// its share of the dense BF16 peak (causal, head width 128, 16K tokens, forward and backward
/// averaged) on H200, where the fla and SSD costings were checked against their own measurements
/// (hardware/kernels/fla_gdn.csv, ssd_h200.csv), over its share on this GPU; never below 1.
/// Blackwell: about 1.9 (FA2 runs near Hopper's rate there while the dense peak is 2.3x higher).
double warp_mma_slowdown(const std::vector<std::string>& attention_data);

/// Every row of the table, for the tests.
struct AttentionRow {
  std::string gpu, impl, dtype, pass;
  bool causal = false;
  double head_dim_qk = 0, head_dim_v = 0, seq = 0, batch = 0, heads = 0, tflops = 0;
  std::string source;
};
const std::vector<AttentionRow>& attention_rows();

}  // namespace clustersim::hardware
