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

// Bytes of HBM traffic per parameter of the optimizer step (models/step.cpp, kAdamBytesPerParam).
constexpr double kAdamBytesPerParam = 34.0;

// One micro-batch's pass durations: block `layer`'s forward and backward (with its recompute;
// training.recompute_layers: only the first blocks of each chunk rerun their forward),
// and what the first virtual stage (embedding) and the last (LM head) add to theirs.
struct PassDurations {
  std::function<double(int layer, int index, bool forward)> block;  ///< index: position in its model chunk
  double embed_fwd = 0, embed_bwd = 0, head_fwd = 0, head_bwd = 0;
};

// The critical path of the busiest stage (plan_step_lower_bound_s) for these pass durations.
double pipeline_bound_s(const scenarios::Scenario& sc, const models::StepCosts& c, const std::vector<int>& vlayers,
                        const PassDurations& d) {
  const auto& p = sc.parallel;
  const int pp = std::max(1, p.pp), vpp = std::max(1, p.vpp), vstages = pp * vpp;
  std::vector<double> F(static_cast<std::size_t>(vstages)), B(static_cast<std::size_t>(vstages));
  for (int v = 0, layer = 0; v < vstages; ++v) {
    for (int l = 0; l < vlayers[std::size_t(v)]; ++l, ++layer) {
      F[std::size_t(v)] += d.block(layer, l, true);
      B[std::size_t(v)] += d.block(layer, l, false);
    }
    if (v == 0) F[0] += d.embed_fwd, B[0] += d.embed_bwd;
    if (v == vstages - 1) F[std::size_t(v)] += d.head_fwd, B[std::size_t(v)] += d.head_bwd;
  }
  const double micro_batches = sc.training.micro_batches(p);
  const int dp_ranks = p.dp * p.cp;
  const double shard = dp_ranks > 1 && p.zero_stage >= 1 ? dp_ranks : 1;
  // The optimizer after the stage's last pass: HBM traffic over its blocks' parameters (a lower
  // bound: the embedding and head are left out) and the step's fixed work.
  auto optimizer_s = [&](int s) {
    double layers = 0;
    for (int ch = 0; ch < vpp; ++ch) layers += vlayers[std::size_t(ch * pp + s)];
    return hardware::memory_cost(sc.gpu, units::Bytes(layers * c.layer_params / shard * kAdamBytesPerParam)).time.si() +
           c.step_fixed.time_s;
  };
  const double optimizer0 = optimizer_s(0);
  double bound = 0, fill = 0, drain = 0;  // fill, drain: over virtual stages 0 .. s-1
  for (int s = 0; s < pp; ++s) {
    double work = 0;
    for (int ch = 0; ch < vpp; ++ch) work += F[std::size_t(ch * pp + s)] + B[std::size_t(ch * pp + s)];
    const double after = std::max(s > 0 ? drain + optimizer0 : 0.0, optimizer_s(s));
    bound = std::max(bound, fill + micro_batches * work + after);
    fill += F[std::size_t(s)];
    drain += B[std::size_t(s)];
  }
  return bound;
}

// Whether the pipeline bound's assumptions are checked for this plan (else the kernel-only one).
bool pipeline_bound_applies(const scenarios::Scenario& sc, const std::vector<int>& vlayers) {
  const auto& p = sc.parallel;
  // A schedule that splits the backward (zb-h1) fills its bubbles with W passes, so 1F1B's fill
  // and drain are no lower bound for it: such plans take the kernel-only bound.
  return !sc.model.is_moe() && sc.model.mtp_layers <= 0 && !p.splits_backward() &&
         int(vlayers.size()) == std::max(1, p.pp) * std::max(1, p.vpp);
}

}  // namespace

double plan_step_lower_bound_s(const scenarios::Scenario& sc) {
  const auto vlayers = models::virtual_stage_layers(sc.model.layers, sc.parallel);
  if (!pipeline_bound_applies(sc, vlayers)) return step_time_lower_bound_s(sc);
  const auto c = models::step_costs(sc.model, sc.training, sc.parallel, sc.gpu);
  const PassDurations d{
      [&](int, int index, bool forward) {
        const bool reruns = sc.training.recompute == models::Recompute::selective || sc.training.recomputes_block(index);
        return forward ? c.layer_fwd.time_s : c.layer_bwd.time_s + (reruns ? c.layer_recompute.time_s : 0.0);
      },
      c.embed_fwd.time_s, c.embed_bwd.time_s, c.head_fwd.time_s, c.head_bwd.time_s};
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
  const PassDurations d{[&](int layer, int index, bool forward) { return total(kind(layer), index, forward); },
                        total(models::kEmbeddingUnit, 0, true), total(models::kEmbeddingUnit, 0, false),
                        total(models::kHeadUnit, 0, true), total(models::kHeadUnit, 0, false)};
  return pipeline_bound_s(sc, c, vlayers, d);
}

}  // namespace clustersim::studies
