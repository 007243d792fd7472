#include "models/pipeline.hpp"

#include <algorithm>

namespace clustersim::models {

std::vector<int> virtual_stage_layers(int layers, const ParallelSpec& p) {
  const int n = p.pp * p.vpp;
  if (static_cast<int>(p.pp_layers.size()) == n) return p.pp_layers;
  std::vector<int> out(static_cast<std::size_t>(n), layers / n);
  for (int i = 0; i < layers % n; ++i) ++out[static_cast<std::size_t>(n - 1 - i)];
  return out;
}

std::vector<PipeOp> stage_schedule(const ParallelSpec& p, int stage, int micro_batches) {
  const int m = micro_batches, P = p.pp;
  std::vector<PipeOp> ops;
  ops.reserve(static_cast<std::size_t>(2 * m * p.vpp));
  if (p.schedule == PipelineSchedule::gpipe) {
    for (int i = 0; i < m; ++i) ops.push_back({true, i, 0});
    for (int i = 0; i < m; ++i) ops.push_back({false, i, 0});
    return ops;
  }
  if (p.schedule == PipelineSchedule::one_f_one_b || p.vpp == 1) {
    const int warmup = std::min(P - stage - 1, m);
    for (int i = 0; i < warmup; ++i) ops.push_back({true, i, 0});
    for (int i = 0; i < m - warmup; ++i) {
      ops.push_back({true, warmup + i, 0});
      ops.push_back({false, i, 0});
    }
    for (int i = m - warmup; i < m; ++i) ops.push_back({false, i, 0});
    return ops;
  }
  // Interleaved: the k-th chunk-pass of a stage (Megatron get_model_chunk_id and
  // get_microbatch_id_in_model_chunk).
  const int v = p.vpp, total = m * v, group = P * v;
  auto op = [&](int k, bool forward) {
    int chunk = (k % group) / P;
    if (!forward) chunk = v - 1 - chunk;
    return PipeOp{forward, (k / group) * P + k % P, chunk};
  };
  int warmup = m == P ? total : std::min(total, (P - stage - 1) * 2 + (v - 1) * P);
  for (int k = 0; k < warmup; ++k) ops.push_back(op(k, true));
  for (int i = 0; i < total - warmup; ++i) {
    ops.push_back(op(warmup + i, true));
    ops.push_back(op(i, false));
  }
  for (int k = total - warmup; k < total; ++k) ops.push_back(op(k, false));
  return ops;
}

int peak_layers_in_flight(const ParallelSpec& p, int stage, int micro_batches,
                          const std::vector<int>& vstage_layers) {
  int now = 0, peak = 0;
  for (const PipeOp& op : stage_schedule(p, stage, micro_batches)) {
    const int layers = vstage_layers[static_cast<std::size_t>(op.chunk * p.pp + stage)];
    now += op.forward ? layers : -layers;
    peak = std::max(peak, now);
  }
  return peak;
}

}  // namespace clustersim::models
