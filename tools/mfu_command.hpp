#pragma once
// `clustersim mfu`: MFU from a real training log's throughput (seeds §4), with the classic
// mistakes flagged: per-GPU vs cluster throughput, sparse vs dense peak, FP8 vs BF16 peak.
#include <CLI/CLI.hpp>

#include <string>

namespace clustersim::tools {

struct MfuOptions {
  double tokens_per_s = 0;
  bool per_gpu = false;
  double step_time_s = 0;
  int global_batch = 0;
  int seq_len = 0;
  std::string model;
  double flops_per_token = 0;
  std::string gpu = "h100-sxm";
  int gpus = 0;
  std::string precision = "bf16";
  std::string recompute;
  double peak_flops = 0;  ///< overrides the profile's dense peak
  bool json = false;
};

CLI::App* add_mfu_command(CLI::App& app, MfuOptions& o);
int run_mfu_command(const MfuOptions& o);

}  // namespace clustersim::tools
