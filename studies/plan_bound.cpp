#include "studies/plan_bound.hpp"

#include <algorithm>
#include <functional>
#include <vector>

#include "hardware/kernel_cost.hpp"
#include "models/layer_ops.hpp"
#include "models/pipeline.hpp"
#include "models/step_merge.hpp"
#include "models/step_program_moe.hpp"
#include "scenarios/simulate.hpp"
#include "studies/sweep_engine.hpp"
#include "topologies/network.hpp"

namespace clustersim::studies {
namespace {


// One micro-batch's pass durations: block `layer`'s forward and backward (with its recompute;
// training.recompute_layers: only the first blocks of each chunk rerun their forward; with a
// split backward B alone), its W pass (0 without a split), and what the first virtual stage
// (embedding) and the last (LM head) add to theirs.
struct PassDurations {
  std::function<double(int layer, int index, bool forward)> block;  ///< index: position in its model chunk
  std::function<double(int layer)> block_w;
  double embed_fwd = 0, embed_bwd = 0, head_fwd = 0, head_bwd = 0, head_w = 0;
};

// The critical path of the busiest stage (plan_step_lower_bound_s) for these pass durations.
double pipeline_bound_s(const scenarios::Scenario& sc, const models::StepCosts& c, const std::vector<int>& vlayers,
                        const PassDurations& d) {
  const auto& p = sc.parallel;
  const int pp = std::max(1, p.pp), vpp = std::max(1, p.vpp), vstages = pp * vpp;
  const bool split = p.splits_backward();
  std::vector<double> F(static_cast<std::size_t>(vstages)), B(F), W(F);
  for (int v = 0, layer = 0; v < vstages; ++v) {
    for (int l = 0; l < vlayers[std::size_t(v)]; ++l, ++layer) {
      F[std::size_t(v)] += d.block(layer, l, true);
      B[std::size_t(v)] += d.block(layer, l, false);
      if (split) W[std::size_t(v)] += d.block_w(layer);
    }
    if (v == 0) F[0] += d.embed_fwd, B[0] += d.embed_bwd;
    if (v == vstages - 1) F[std::size_t(v)] += d.head_fwd, B[std::size_t(v)] += d.head_bwd, W[std::size_t(v)] += d.head_w;
  }
  const double micro_batches = sc.training.micro_batches(p);
  const int dp_ranks = p.dp * p.cp;
  const double shard = dp_ranks > 1 && p.zero_stage >= 1 ? dp_ranks : 1;
  // The optimizer after the stage's last pass: HBM traffic over its blocks' parameters (a lower
  // bound: the embedding and head are left out) and the step's fixed work.
  auto optimizer_s = [&](int s) {
    double layers = 0;
    for (int ch = 0; ch < vpp; ++ch) layers += vlayers[std::size_t(ch * pp + s)];
    return hardware::memory_cost(sc.gpu, units::Bytes(layers * c.layer_params / shard * sc.training.adam_traffic_bytes_per_param())).time.si() +
           c.step_fixed.time_s;
  };
  const double optimizer0 = optimizer_s(0);
  double bound = 0, fill = 0, drain = 0;  // fill, drain: over virtual stages 0 .. s-1
  for (int s = 0; s < pp; ++s) {
    double work = 0;
    for (int ch = 0; ch < vpp; ++ch) work += F[std::size_t(ch * pp + s)] + B[std::size_t(ch * pp + s)];
    if (split) {
      // zb-h1 (vpp 1): stage s's last B ends after every pass before it, i.e. all but the W
      // passes that follow it; that micro-batch's B then crosses stages s-1 .. 0, and stage 0
      // still runs its W before its optimizer.
      const double w = W[std::size_t(s)];
      const double last_b = fill + micro_batches * (work + w) - weight_passes_after_last_backward(pp, s, int(micro_batches)) * w;
      const double after_last_b = s > 0 ? drain + W[0] + optimizer0 : 0.0;
      bound = std::max({bound, fill + micro_batches * (work + w) + optimizer_s(s), last_b + after_last_b});
    } else {
      const double after = std::max(s > 0 ? drain + optimizer0 : 0.0, optimizer_s(s));
      bound = std::max(bound, fill + micro_batches * work + after);
    }
    fill += F[std::size_t(s)];
    drain += B[std::size_t(s)];
  }
  return bound;
}

// Whether the pipeline bound's assumptions are checked for this plan (else the kernel-only one).
// A schedule that splits the backward fills 1F1B's drain with W passes, so 1F1B's fill and drain
// are no lower bound for it: zb-h1 (one chunk per stage) takes its own critical path above, any
// other split schedule the kernel-only bound.
bool pipeline_bound_applies(const scenarios::Scenario& sc, const std::vector<int>& vlayers) {
  const auto& p = sc.parallel;
  const bool split_ok = !p.splits_backward() || (p.schedule == models::PipelineSchedule::zb_h1 && p.vpp == 1);
  return !sc.model.is_moe() && !sc.model.hybrid() && sc.model.mtp_layers <= 0 && split_ok &&
         int(vlayers.size()) == std::max(1, p.pp) * std::max(1, p.vpp);
}

}  // namespace

int weight_passes_after_last_backward(int pp, int stage, int micro_batches) {
  // models::stage_schedule's zb-h1 order: a warm-up of min(pp - stage - 1, m) forwards; F/B pairs,
  // a W after each B from the (stage + 1)-th on; in the cool-down a W after each B; then the rest.
  const int m = micro_batches, warmup = std::min(pp - stage - 1, m), deferred = stage;
  const int steady_w = std::max(0, m - warmup - deferred), rest = m - steady_w - warmup;
  const bool w_right_after = warmup > 0 || m - 1 >= deferred;
  return (w_right_after ? 1 : 0) + rest;
}

double plan_step_lower_bound_s(const scenarios::Scenario& sc) {
  const auto vlayers = models::virtual_stage_layers(sc.model.layers, sc.parallel);
  if (!pipeline_bound_applies(sc, vlayers)) return step_time_lower_bound_s(sc);
  const auto c = models::step_costs(sc.model, sc.training, sc.parallel, sc.gpu);
  // With a split backward (zb-h1) B is every backward kernel but the wgrad GEMMs, W those.
  const bool split = sc.parallel.splits_backward();
  const double layer_b = split ? models::input_grad_s(c.layer_bwd) : c.layer_bwd.time_s;
  const double head_b = split ? models::input_grad_s(c.head_bwd) : c.head_bwd.time_s;
  const double layer_w = split ? models::weight_grad_s(c.layer_bwd) : 0.0;
  const double head_w = split ? models::weight_grad_s(c.head_bwd) : 0.0;
  const PassDurations d{
      [&](int, int index, bool forward) {
        const bool reruns = sc.training.recompute == models::Recompute::selective || sc.training.recomputes_block(index);
        return forward ? c.layer_fwd.time_s : layer_b + (reruns ? c.layer_recompute.time_s : 0.0);
      },
      [&](int) { return layer_w; }, c.embed_fwd.time_s, c.embed_bwd.time_s, c.head_fwd.time_s, head_b, head_w};
  return pipeline_bound_s(sc, c, vlayers, d);
}

double plan_step_network_bound_s(const scenarios::Scenario& sc) {
  const auto vlayers = models::virtual_stage_layers(sc.model.layers, sc.parallel);
  if (!pipeline_bound_applies(sc, vlayers)) return step_time_lower_bound_s(sc);
  const auto& t = sc.training;
  // The costs, network and block program scenarios::simulate() builds for this scenario.
  const auto c = scenarios::step_costs_of(sc);
  const topologies::Network network = scenarios::network_of(sc);
  const models::BlockProgram program = models::block_program(sc.model, t, sc.parallel, sc.gpu, c, network);
  models::PassMerger merger(program, t, sc.gpu);
  const auto total = [&](int unit, int index, bool forward) {
    const auto kind = forward ? models::PassKind::forward : models::PassKind::backward;
    return merger.total_s(merger.unit(models::PassUnit{unit, index, 0}, kind));
  };
  const auto kind = [&](int layer) {
    return program.block_kind.empty() ? 0 : program.block_kind[static_cast<std::size_t>(layer)];
  };
  // With a split backward the merger's backward pass is B alone and its weight_grad pass W.
  const bool split = sc.parallel.splits_backward();
  const auto w_total = [&](int unit) {
    return split ? merger.total_s(merger.unit(models::PassUnit{unit, 0, 0}, models::PassKind::weight_grad)) : 0.0;
  };
  const PassDurations d{[&](int layer, int index, bool forward) { return total(kind(layer), index, forward); },
                        [&](int layer) { return w_total(kind(layer)); },
                        total(models::kEmbeddingUnit, 0, true), total(models::kEmbeddingUnit, 0, false),
                        total(models::kHeadUnit, 0, true), total(models::kHeadUnit, 0, false), w_total(models::kHeadUnit)};
  return pipeline_bound_s(sc, c, vlayers, d);
}

}  // namespace clustersim::studies
