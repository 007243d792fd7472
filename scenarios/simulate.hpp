#pragma once
// Scenario → Report: the composition root that runs the models on the engine.
#include <vector>

#include "models/flops.hpp"
#include "models/layer_ops.hpp"
#include "models/memory.hpp"
#include "models/moe_routing.hpp"
#include "models/reliability.hpp"
#include "models/step.hpp"
#include "scenarios/scenario.hpp"
#include "topologies/network.hpp"

namespace clustersim::scenarios {

struct Report {
  Scenario scenario;
  int num_gpus = 0;
  models::ParamCount params;
  models::FlopsPerToken flops;
  double peak_flops = 0;           ///< per GPU, dense, for the training precision
  double tokens_per_step = 0;      ///< real tokens (padding excluded)
  double step_time_s = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;                  ///< fraction of peak (model FLOPs)
  double hfu = 0;                  ///< fraction of peak (model + recompute FLOPs, padding included)
  double tflops_per_gpu = 0;       ///< model FLOP/s per GPU, in 1e12
  double days_to_train = 0;        ///< expected, with failures, checkpoints, stragglers (0 when no budget)
  double days_to_train_ideal = 0;  ///< training.tokens / tokens_per_s (0 when no budget)
  double useful_token_fraction = 1;  ///< real tokens ÷ computed token slots (padding)
  models::RunEstimate run;         ///< the whole run: goodput, interruptions, lost time
  models::MemoryEstimate memory;   ///< the pipeline stage with the highest peak
  std::vector<models::MemoryEstimate> memory_per_stage;
  models::StepCosts costs;
  models::StepResult step;
  struct MonteCarlo {
    int runs = 0;                  ///< 0: not run
    std::uint64_t seed = 0;
    double days_mean = 0, days_p10 = 0, days_p50 = 0, days_p90 = 0;
  } monte_carlo;
};

/// `timeline`, when given, receives every simulated task (for --trace).
/// Where a token's routed experts land on the scenario's EP group (models::token_spread); units 0
/// for a dense model or ep 1. On demand for the reports, not part of the simulated Report (a sweep
/// would pay for a second network it never prints).
models::TokenSpread ep_token_spread(const Scenario& sc);
Report simulate(const Scenario& sc, std::vector<models::TimelineEntry>* timeline = nullptr);
/// The report of `sc` whose step `step` already is: a simulation of the same step (sweeps and
/// plans reuse one for a configuration whose step is another's, models::step_zero_stage).
Report simulate(const Scenario& sc, const models::StepResult& step);

/// The step's per-block kernel costs on the scenario's GPU (host copies over its topology's PCIe link).
models::StepCosts step_costs_of(const Scenario& sc);
/// The scenario's one network: its topology, the nodes its GPUs fill, its rank layout.
topologies::Network network_of(const Scenario& sc);
/// Replays the training run `runs` times with random failure times (models::monte_carlo_run_s).
void add_monte_carlo(Report& r, int runs, std::uint64_t seed);

}  // namespace clustersim::scenarios
