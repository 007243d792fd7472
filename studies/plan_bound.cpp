#include "studies/plan_bound.hpp"

#include <algorithm>
#include <vector>

#include "hardware/kernel_cost.hpp"
#include "models/layer_ops.hpp"
#include "models/pipeline.hpp"
#include "studies/sweep_engine.hpp"

namespace clustersim::studies {
namespace {

// Bytes of HBM traffic per parameter of the optimizer step (models/step.cpp, kAdamBytesPerParam).
constexpr double kAdamBytesPerParam = 34.0;

}  // namespace

double plan_step_lower_bound_s(const scenarios::Scenario& sc) {
  const auto& m = sc.model;
  const auto& p = sc.parallel;
  if (m.is_moe() || m.mtp_layers > 0) return step_time_lower_bound_s(sc);
  const auto c = models::step_costs(m, sc.training, p, sc.gpu);
  const int pp = std::max(1, p.pp), vpp = std::max(1, p.vpp), vstages = pp * vpp;
  const auto vlayers = models::virtual_stage_layers(m.layers, p);
  if (int(vlayers.size()) != vstages) return step_time_lower_bound_s(sc);
  // Kernel time of one micro-batch's forward (F) and backward with its recompute (B) on each
  // virtual stage: its blocks, the embedding on the first, the head on the last.
  std::vector<double> F(static_cast<std::size_t>(vstages)), B(static_cast<std::size_t>(vstages));
  for (int v = 0; v < vstages; ++v) {
    const double n = vlayers[std::size_t(v)];
    F[std::size_t(v)] = n * c.layer_fwd.time_s;
    B[std::size_t(v)] = n * (c.layer_bwd.time_s + c.layer_recompute.time_s);
    if (v == 0) F[0] += c.embed_fwd.time_s, B[0] += c.embed_bwd.time_s;
    if (v == vstages - 1) F[std::size_t(v)] += c.head_fwd.time_s, B[std::size_t(v)] += c.head_bwd.time_s;
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

}  // namespace clustersim::studies
