#pragma once
// One attribution pass over a run: where each stage's seconds went (StepBreakdown) and how long
// each communication class was busy. Used for the whole step and for the passes the merger
// profiles alone, so both follow one rule.
#include <vector>

#include "models/step.hpp"
#include "models/step_graph.hpp"
#include "sim/runner.hpp"

namespace clustersim::models {

/// Where the time of a merged task went when its kernels and transfers ran alone: a whole pass
/// (or one unit) simulated once at kernel granularity, then run as one task of `total_s`.
struct PassProfile {
  double total_s = 0;
  double forward_s = 0, backward_s = 0, recompute_s = 0;
  double tp_exposed_s = 0, cp_exposed_s = 0, ep_exposed_s = 0;  ///< transfer time with no kernel running
  double tp_busy_s = 0, cp_busy_s = 0, ep_busy_s = 0;
  double slowdown_s = 0;  ///< kernel time lost to SMs taken by the overlapped transfers
};

struct StageTime {
  StepBreakdown breakdown;
  double compute_busy_s = 0;   ///< compute stream busy (the stage with the most is reported)
  double slowdown_s = 0;       ///< compute time lost to SMs taken by communication
  double dp_busy_s = 0, tp_busy_s = 0, cp_busy_s = 0, ep_busy_s = 0;
};

/// Attributes every task of `g` that ran in `run` to its stage. Merged tasks (g.merged_profile)
/// bring their profile's split; a pipeline send holds up its receiver, and its sender too when
/// `sends_block_sender`. Idle time with `stages` > 1 is the bubble.
std::vector<StageTime> attribute(const StepGraph& g, const sim::RunResult& run, int stages,
                                 const std::vector<PassProfile>& profiles, bool sends_block_sender);

/// The profile of a pass or unit simulated alone on a one-stage graph.
PassProfile profile_of(const StepGraph& g, const sim::RunResult& run);

}  // namespace clustersim::models
