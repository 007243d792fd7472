#pragma once
// Steady-state pipeline simulation. Once a 1F1B, zb-h1 or interleaved schedule has warmed up, adding
// `period` micro-batches adds the same passes in the same relative timing, so every integer of
// the step (makespan, per-stage picosecond tallies, events, tasks) is affine in the number of
// micro-batches m. A deep pipeline with hundreds of micro-batches is then simulated at three small
// counts m0, m0 + period, m0 + 2·period; when every integer's second difference is exactly zero
// the step at m is extrapolated, else (or when m is small) it is simulated in full.
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "models/step.hpp"
#include "models/detail/step_attribution.hpp"
#include "models/training_spec.hpp"
#include "sim/runner.hpp"
#include "sim/task_graph.hpp"

namespace clustersim::models {

/// The integers one step's result is made of (step_result() turns them into a StepResult).
struct StepTally {
  std::vector<StageTally> stages;
  std::int64_t makespan_ps = 0;
  std::int64_t events = 0;
  std::int64_t tasks = 0;
  int grad_buckets = 0;  ///< on stage 0; not additive: must be equal at every point
  /// Per stream, how long before the step's end each task ended, for the tasks of its second
  /// half, nearest the end first. In the step's last quarter these are equal at every point when
  /// the schedule repeats exactly; a stream drifting against the others (a send queue growing by
  /// a few ps per micro-batch, which changes the step only hundreds of micro-batches later) makes
  /// them differ, so the aggregate integers alone are not trusted.
  std::vector<std::vector<std::int64_t>> tail;
};

/// simulate_step() by extrapolation from three samples, or none when the plan does not qualify
/// (steady_samples) or the samples are not exactly affine (then simulate in full).
std::optional<StepResult> simulate_step_steady(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                               const hardware::GpuSpec& gpu, const StepCosts& costs,
                                               const topologies::Network& network);

/// StepTally::tail of a run of `graph`.
std::vector<std::vector<std::int64_t>> tail_signature(const sim::TaskGraph& graph, const sim::RunResult& run);

/// The step's result from its tallies (`profiles`: the pass merger's, indexed by the tallies).
StepResult step_result(const StepTally& t, const std::vector<PassProfile>& profiles, int micro_batches);

/// Where to sample a step of `micro_batches`: m0 and the schedule's period (1F1B, zb-h1, zbv,
/// dualpipev: 1; interleaved: pp, since its micro-batch count is a multiple of pp; pp 1 is 1F1B
/// without a pipeline). Attempt 0 starts at 2·pp, attempt 1 at 3·pp. None when the schedule is
/// not one of those, m is too small for three samples to be much cheaper than the step, or there
/// is no such attempt.
struct SteadySamples {
  int m0 = 0;
  int period = 0;
};
std::optional<SteadySamples> steady_samples(const ParallelSpec& p, int micro_batches, int attempt = 0);
inline constexpr int kSteadyAttempts = 2;  ///< the most attempts steady_samples() makes

/// The tallies at m0 + k·period from those at m0, m0 + period and m0 + 2·period, when each of
/// their integers has a zero second difference and the non-additive ones are equal; else none.
std::optional<StepTally> extrapolate_tally(const std::array<StepTally, 3>& at, std::int64_t k);

}  // namespace clustersim::models
