#include "scenarios/simulate.hpp"

#include "models/moe_exchanges.hpp"

#include <algorithm>
#include <numeric>

namespace clustersim::scenarios {

models::StepCosts step_costs_of(const Scenario& sc) {
  const auto& topo = sc.network.topology;
  return models::step_costs(sc.model, sc.training, sc.parallel, sc.gpu, topo.pcie_bandwidth.si() * topo.pcie_efficiency);
}

topologies::Network network_of(const Scenario& sc) {
  const auto& topo = sc.network.topology;
  return topologies::Network(topo, topologies::Network::nodes_for(topo, sc.cluster.gpus),
                             {sc.parallel.sizes(), sc.network.placement}, sc.network.algorithm);
}

namespace {

// Seconds the batch ramp's tokens take: the batch grows linearly in tokens from `from` to
// global_batch; the ramp is cut into kSegments equal token segments, each run at the batch of its
// midpoint (rounded down to a multiple of micro_batch × dp, × pp for the interleaved schedule)
// and simulated as its own step.
double ramp_seconds(const Scenario& sc, double full_tokens_per_s) {
  const auto& ramp = sc.training.batch_ramp;
  if (!ramp.enabled() || sc.training.tokens <= 0) return 0;
  constexpr int kSegments = 4;
  const bool interleaved = sc.parallel.schedule == models::PipelineSchedule::interleaved;
  const long unit = long(sc.training.micro_batch) * sc.parallel.dp * (interleaved ? sc.parallel.pp : 1);
  const long to = sc.training.global_batch;
  const topologies::Network network = network_of(sc);
  double s = 0;
  for (int k = 0; k < kSegments; ++k) {
    const double mid = double(ramp.from) + (to - ramp.from) * (k + 0.5) / kSegments;
    Scenario at = sc;
    at.training.global_batch = std::max(unit, long(mid) / unit * unit);
    double tps = full_tokens_per_s;
    if (at.training.global_batch != to) {
      const auto costs = step_costs_of(at);
      const auto step = models::simulate_step(at.model, at.training, at.parallel, at.gpu, costs, network, nullptr);
      tps = double(at.training.global_batch) * at.training.seq_len *
            models::useful_token_fraction(at.data, at.training.seq_len) / step.step_time_s;
    }
    s += ramp.tokens / kSegments / tps;
  }
  return s;
}

}  // namespace

namespace {

// The report of `sc`, whose step is `known` when given (else simulated).
Report report_of(const Scenario& sc, std::vector<models::TimelineEntry>* timeline, const models::StepResult* known) {
  Report r;
  r.scenario = sc;
  const auto& t = sc.training;
  r.num_gpus = sc.cluster.gpus;
  r.params = models::count_params(sc.model, t.seq_len);
  r.peak_flops = sc.gpu.peak(t.precision).si();
  r.costs = step_costs_of(sc);
  r.flops = models::flops_per_token(sc.model, t, r.costs.recompute_share);
  r.step = known ? *known : models::simulate_step(sc.model, t, sc.parallel, sc.gpu, r.costs, network_of(sc), timeline);

  r.memory_per_stage = models::estimate_memory_per_stage(sc.model, t, sc.parallel, sc.gpu);
  r.memory = models::largest_stage(r.memory_per_stage);
  // Padded slots are computed (the step is simulated at seq_len) but only real tokens count as
  // throughput and toward MFU; HFU counts every executed FLOP.
  r.useful_token_fraction = models::useful_token_fraction(sc.data, t.seq_len);
  r.tokens_per_step = double(t.global_batch) * t.seq_len * r.useful_token_fraction;
  r.step_time_s = r.step.step_time_s;
  r.tokens_per_s = r.tokens_per_step / r.step_time_s;
  r.tokens_per_s_per_gpu = r.tokens_per_s / r.num_gpus;
  r.tflops_per_gpu = r.flops.model * r.tokens_per_s_per_gpu / 1e12;
  r.mfu = r.flops.model * r.tokens_per_s_per_gpu / r.peak_flops;
  r.hfu = r.flops.hardware * r.tokens_per_s_per_gpu / r.useful_token_fraction / r.peak_flops;
  const double ramp_s = ramp_seconds(sc, r.tokens_per_s);
  const double ideal_s = t.batch_ramp.enabled() ? ramp_s + (t.tokens - t.batch_ramp.tokens) / r.tokens_per_s
                                                : t.tokens / r.tokens_per_s;
  r.days_to_train_ideal = t.tokens > 0 ? ideal_s / 86400.0 : 0.0;

  models::RunInputs run;
  run.step_time_s = r.step_time_s;
  const auto& b = r.step.breakdown;
  run.compute_time_s = b.forward_s + b.backward_s + b.recompute_s + b.optimizer_s;
  // With a ramp: the full-batch steps that take as long as the run (its compute and failures).
  run.steps = t.tokens > 0 ? ideal_s / r.step_time_s : 0;
  run.useful_fraction = r.useful_token_fraction;
  run.num_gpus = r.num_gpus;
  run.checkpoint_bytes = models::checkpoint_bytes(r.params, t.precision, t.fp32_optimizer_state);
  run.host_copy_bps = sc.network.topology.pcie_bandwidth.si() * sc.network.topology.pcie_efficiency;
  r.run = models::estimate_run(run, sc.reliability);
  r.days_to_train = sc.reliability.enabled ? r.run.expected_s / 86400.0 : r.days_to_train_ideal;
  return r;
}

}  // namespace

models::TokenSpread ep_token_spread(const Scenario& sc) {
  if (!sc.model.is_moe() || sc.parallel.ep <= 1) return {};
  return models::token_spread(sc.model.moe, network_of(sc));
}

Report simulate(const Scenario& sc, std::vector<models::TimelineEntry>* timeline) {
  return report_of(sc, timeline, nullptr);
}

Report simulate(const Scenario& sc, const models::StepResult& step) { return report_of(sc, nullptr, &step); }

void add_monte_carlo(Report& r, int runs, std::uint64_t seed) {
  const auto walls = models::monte_carlo_run_s(r.run, r.scenario.reliability, r.num_gpus, runs, seed);
  auto& mc = r.monte_carlo;
  mc.runs = runs;
  mc.seed = seed;
  if (walls.empty()) return;
  mc.days_mean = std::accumulate(walls.begin(), walls.end(), 0.0) / double(walls.size()) / 86400.0;
  mc.days_p10 = models::percentile(walls, 10) / 86400.0;
  mc.days_p50 = models::percentile(walls, 50) / 86400.0;
  mc.days_p90 = models::percentile(walls, 90) / 86400.0;
}

}  // namespace clustersim::scenarios
