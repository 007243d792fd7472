#pragma once
// Sliding-window attention time, from the causal kernel's. A fused kernel (FlashAttention,
// cuDNN) walks, for each 128-row query tile, the 128-key tiles its mask leaves: ceil(w/128) + 1
// for a window w, (s/128 + 1)/2 on average when causal over s tokens. Each query tile also pays a
// fixed cost (loading Q, the softmax epilogue, writing O and the log-sum-exp), which short windows
// cannot hide: cudnn-frontend's gpt_oss rows (window 128, head dim 64) run 6x slower per unmasked
// FLOP than the causal rate on GB200 and about 1.5x on H200 (hardware/kernels/attention_window.csv).
#include "hardware/kernel_cost.hpp"

namespace clustersim::hardware {

/// The fixed cost of a query tile, in key tiles, for `pass` on this profile: from the windowed
/// row at 4,096 tokens of the first data GPU in `gpu.attention_data` that has one, against the
/// profile's own causal cuDNN cost of the same call (t = t_tile · (overhead + tiles)). Negative
/// when no data GPU of the profile has windowed rows (A100, the AMD profiles). `how` names the row.
double window_tile_overhead(const GpuSpec& gpu, KernelPass pass, const char** how = nullptr);

/// Time of a fused attention call with `windowed.window` over the same call without the window
/// (kernel gaps left out): (overhead + window tiles) / (overhead + causal tiles). Where the
/// profile has no windowed rows, the unmasked-FLOP ratio (every tile at the causal rate).
double windowed_attention_time_ratio(const GpuSpec& gpu, KernelPass pass, const AttentionShape& windowed);

/// The windowed rows, for the tests.
struct WindowRow {
  std::string gpu, pass;
  double window = 0, head_dim = 0, seq = 0, batch = 0, heads = 0, tflops = 0;
};
const std::vector<WindowRow>& window_rows();

}  // namespace clustersim::hardware
