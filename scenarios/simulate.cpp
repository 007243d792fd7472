#include "scenarios/simulate.hpp"

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

Report simulate(const Scenario& sc, std::vector<models::TimelineEntry>* timeline) {
  Report r;
  r.scenario = sc;
  const auto& t = sc.training;
  r.num_gpus = sc.cluster.gpus;
  r.params = models::count_params(sc.model, t.seq_len);
  r.peak_flops = sc.gpu.peak(t.precision).si();
  r.costs = step_costs_of(sc);
  r.flops = models::flops_per_token(sc.model, t, r.costs.recompute_share);
  const topologies::Network network = network_of(sc);
  r.step = models::simulate_step(sc.model, t, sc.parallel, sc.gpu, r.costs, network, timeline);

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
  r.days_to_train_ideal = t.tokens > 0 ? t.tokens / r.tokens_per_s / 86400.0 : 0.0;

  models::RunInputs run;
  run.step_time_s = r.step_time_s;
  const auto& b = r.step.breakdown;
  run.compute_time_s = b.forward_s + b.backward_s + b.recompute_s + b.optimizer_s;
  run.steps = t.tokens > 0 ? t.tokens / r.tokens_per_step : 0;
  run.useful_fraction = r.useful_token_fraction;
  run.num_gpus = r.num_gpus;
  run.checkpoint_bytes = models::checkpoint_bytes(r.params, t.precision);
  run.host_copy_bps = sc.network.topology.pcie_bandwidth.si() * sc.network.topology.pcie_efficiency;
  r.run = models::estimate_run(run, sc.reliability);
  r.days_to_train = sc.reliability.enabled ? r.run.expected_s / 86400.0 : r.days_to_train_ideal;
  return r;
}

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
