#pragma once
// A lower bound on a plan's simulated step time from its pipeline structure, for the plan
// search to skip plans that cannot win (studies/plan_search.cpp). Cheap: kernel costs only, no
// network, no task graph.
#include "scenarios/scenario.hpp"

namespace clustersim::studies {

/// A lower bound on scenarios::simulate(sc).step_time_s: the busiest pipeline stage's critical
/// path. Stage s cannot start before micro-batch 0's forward has crossed the virtual stages
/// before it, then runs all its passes one after another on its compute stream, and after its
/// last pass (a backward) that micro-batch's gradient still crosses the virtual stages before it
/// down to stage 0, whose optimizer runs last. Every pass is taken at its kernel time alone (the
/// simulation adds TP/CP/DP communication, contention and bubbles). Falls back to
/// step_time_lower_bound_s (studies/sweep_engine.hpp) where those assumptions are not checked:
/// MoE models, MTP modules.
double plan_step_lower_bound_s(const scenarios::Scenario& sc);

}  // namespace clustersim::studies
