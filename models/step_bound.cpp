#include "models/step_bound.hpp"

#include <algorithm>
#include <functional>
#include <vector>

#include "models/pipeline.hpp"
#include "models/detail/step_gradients.hpp"
#include "models/detail/step_merge.hpp"
#include "models/step_program.hpp"
#include "models/step_program_moe.hpp"

namespace clustersim::models {

namespace {

// One micro-batch's pass durations: block `layer`'s forward and backward (with its recompute;
// training.recompute_layers: only the first blocks of each chunk rerun their forward; with a
// split backward B alone), its W pass (0 without a split), and what the first virtual stage
// (embedding) and the last (LM head, MTP modules) add to theirs.
struct PassDurations {
  std::function<double(int layer, int index, bool forward)> block;  ///< index: position in its model chunk
  std::function<double(int layer)> block_w;
  double embed_fwd = 0, embed_bwd = 0, head_fwd = 0, head_bwd = 0, head_w = 0;
};

// Forward, backward and W time of one micro-batch on each virtual stage.
struct StagePasses {
  std::vector<double> F, B, W;
};

StagePasses stage_passes(const ParallelSpec& p, const std::vector<int>& vlayers, const PassDurations& d) {
  const int vstages = std::max(1, p.pp) * std::max(1, p.vpp);
  const bool split = p.splits_backward();
  StagePasses x{std::vector<double>(std::size_t(vstages)), std::vector<double>(std::size_t(vstages)),
                std::vector<double>(std::size_t(vstages))};
  for (int v = 0, layer = 0; v < vstages; ++v) {
    const auto i = std::size_t(v);
    for (int l = 0; l < vlayers[i]; ++l, ++layer) {
      x.F[i] += d.block(layer, l, true);
      x.B[i] += d.block(layer, l, false);
      if (split) x.W[i] += d.block_w(layer);
    }
    if (v == 0) x.F[0] += d.embed_fwd, x.B[0] += d.embed_bwd;
    if (v == vstages - 1) x.F[i] += d.head_fwd, x.B[i] += d.head_bwd, x.W[i] += d.head_w;
  }
  return x;
}

// The critical path of the busiest stage (step_pipeline_bound_s) for these pass durations.
double pipeline_bound_s(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                        const hardware::GpuSpec& gpu, const StepCosts& c, const std::vector<int>& vlayers,
                        const PassDurations& d) {
  const int pp = std::max(1, p.pp), vpp = std::max(1, p.vpp);
  const bool split = p.splits_backward();
  const StagePasses x = stage_passes(p, vlayers, d);
  const double micro_batches = t.micro_batches(p);
  // The optimizer after the stage's last pass, as the step runs it (without its scalar
  // all-reduces).
  auto optimizer_s = [&](int s) { return optimizer_update_s(gpu, c, t, stage_optimizer_params(m, t, p, c, vlayers, s)); };
  const double optimizer0 = optimizer_s(0);
  double bound = 0, fill = 0, drain = 0;  // fill, drain: over virtual stages 0 .. s-1
  for (int s = 0; s < pp; ++s) {
    double work = 0;
    for (int ch = 0; ch < vpp; ++ch) work += x.F[std::size_t(ch * pp + s)] + x.B[std::size_t(ch * pp + s)];
    if (split) {
      // zb-h1 (vpp 1): stage s's last B ends after every pass before it, i.e. all but the W
      // passes that follow it; that micro-batch's B then crosses stages s-1 .. 0, and stage 0
      // still runs its W before its optimizer.
      const double w = x.W[std::size_t(s)];
      const double last_b =
          fill + micro_batches * (work + w) - weight_passes_after_last_backward(pp, s, int(micro_batches)) * w;
      const double after_last_b = s > 0 ? drain + x.W[0] + optimizer0 : 0.0;
      bound = std::max({bound, fill + micro_batches * (work + w) + optimizer_s(s), last_b + after_last_b});
    } else {
      const double after = std::max(s > 0 ? drain + optimizer0 : 0.0, optimizer_s(s));
      bound = std::max(bound, fill + micro_batches * work + after);
    }
    fill += x.F[std::size_t(s)];
    drain += x.B[std::size_t(s)];
  }
  // The engine rounds every task to the nearest picosecond (sim::Time::from_seconds), and a plan
  // without DP or PP traffic runs exactly this path: the bound gives back 1 ps for every task the
  // path can hold (each unit of each pass, at most 3 passes per micro-batch, fill and drain).
  const double units = m.layers + m.mtp_layers + 2.0 * pp * vpp;
  return bound - ((3 * micro_batches + 2) * units + 2) * 1e-12;
}

// Whether the schedule's critical path above holds: a schedule that splits the backward fills
// 1F1B's drain with W passes, so 1F1B's fill and drain are no lower bound for it; zb-h1 (one
// chunk per stage) takes its own path above.
bool schedule_bounded(const ParallelSpec& p, const std::vector<int>& vlayers) {
  const bool split_ok = !p.splits_backward() || (p.schedule == PipelineSchedule::zb_h1 && p.vpp == 1);
  return split_ok && int(vlayers.size()) == std::max(1, p.pp) * std::max(1, p.vpp);
}

}  // namespace

double step_kernel_floor_s(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const StepCosts& c) {
  // Blocks of two precisions (training.bf16_layers): `c` prices only one of them. Sparse or
  // compressed attention (DSA, DeepSeek-V4): `c`'s dense core over all s keys can cost far more
  // than the block's own core at long sequences, so it bounds nothing.
  if (m.hybrid() || t.has_bf16_blocks() || m.sparse_attention.enabled() || m.compressed_attention.enabled()) return 0;
  // training.recompute_layers: not every block reruns its forward; the floor counts none of them.
  const bool partial = t.recompute == Recompute::full && t.recompute_layers >= 0;
  const double per_layer = c.layer_fwd.time_s + c.layer_bwd.time_s + (partial ? 0.0 : c.layer_recompute.time_s);
  const int pp = std::max(1, p.pp), chunks = pp * std::max(1, p.vpp);
  const int layers_on_least_loaded_stage = m.layers / pp;
  // The last stage has nothing to do until the first micro-batch's forward has crossed the
  // pp − 1 stages before it, one model chunk each (the pipeline fill).
  const double fill_s = (pp - 1) * double(m.layers / chunks) * c.layer_fwd.time_s;
  return fill_s + double(t.micro_batches(p)) * layers_on_least_loaded_stage * per_layer;
}

std::optional<double> step_pipeline_bound_s(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                            const hardware::GpuSpec& gpu, const StepCosts& c) {
  const auto vlayers = virtual_stage_layers(m.layers, p);
  if (m.is_moe() || m.hybrid() || m.mtp_layers > 0 || t.has_bf16_blocks() || !schedule_bounded(p, vlayers))
    return std::nullopt;
  // With a split backward (zb-h1) B is every backward kernel but the wgrad GEMMs, W those.
  const bool split = p.splits_backward();
  const double layer_b = split ? input_grad_s(c.layer_bwd) : c.layer_bwd.time_s;
  const double head_b = split ? input_grad_s(c.head_bwd) : c.head_bwd.time_s;
  const double layer_w = split ? weight_grad_s(c.layer_bwd) : 0.0;
  const double head_w = split ? weight_grad_s(c.head_bwd) : 0.0;
  const PassDurations d{
      [&](int, int index, bool forward) {
        const bool reruns = t.recompute == Recompute::selective || t.recomputes_block(index);
        return forward ? c.layer_fwd.time_s : layer_b + (reruns ? c.layer_recompute.time_s : 0.0);
      },
      [&](int) { return layer_w; }, c.embed_fwd.time_s, c.embed_bwd.time_s, c.head_fwd.time_s, head_b, head_w};
  return pipeline_bound_s(m, t, p, gpu, c, vlayers, d);
}

std::optional<double> step_pass_bound_s(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                        const hardware::GpuSpec& gpu, const StepCosts& c,
                                        const topologies::Network& network) {
  const auto vlayers = virtual_stage_layers(m.layers, p);
  if (!schedule_bounded(p, vlayers)) return std::nullopt;
  // The block program and merger simulate_step builds for this plan.
  const BlockProgram program = block_program(m, t, p, gpu, c, network);
  PassMerger merger(program, t, gpu);
  const auto total = [&](int unit, int index, bool forward) {
    const auto kind = forward ? PassKind::forward : PassKind::backward;
    return merger.total_s(merger.unit(PassUnit{unit, index, 0}, kind));
  };
  const auto kind = [&](int layer) {
    return program.block_kind.empty() ? 0 : program.block_kind[static_cast<std::size_t>(layer)];
  };
  // With a split backward the merger's backward pass is B alone and its weight_grad pass W.
  const bool split = p.splits_backward();
  const auto w_total = [&](int unit) {
    return split ? merger.total_s(merger.unit(PassUnit{unit, 0, 0}, PassKind::weight_grad)) : 0.0;
  };
  const PassDurations d{[&](int layer, int index, bool forward) { return total(kind(layer), index, forward); },
                        [&](int layer) { return w_total(kind(layer)); },
                        total(kEmbeddingUnit, 0, true), total(kEmbeddingUnit, 0, false),
                        total(kHeadUnit, 0, true), total(kHeadUnit, 0, false), w_total(kHeadUnit)};
  return pipeline_bound_s(m, t, p, gpu, c, vlayers, d);
}

}  // namespace clustersim::models
