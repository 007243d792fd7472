#pragma once
// Lower bounds on a plan's simulated step time from its pipeline structure, for the plan search
// to skip plans that cannot win (studies/plan_search.cpp). No task graph of the step.
#include "scenarios/scenario.hpp"

namespace clustersim::studies {

/// A lower bound on scenarios::simulate(sc).step_time_s: the busiest pipeline stage's critical
/// path. Stage s cannot start before micro-batch 0's forward has crossed the virtual stages
/// before it, then runs all its passes one after another on its compute stream, and after its
/// last pass (a backward) that micro-batch's gradient still crosses the virtual stages before it
/// down to stage 0, whose optimizer runs last. Every pass is taken at its kernel time alone (the
/// simulation adds TP/CP/DP communication, contention and bubbles). Cheap: kernel costs only, no
/// network. Falls back to step_time_lower_bound_s (studies/sweep_engine.hpp) where those
/// assumptions are not checked: MoE models, MTP modules.
double plan_step_lower_bound_s(const scenarios::Scenario& sc);

/// The same critical path with every pass at the duration the step gives its merged task: each
/// unit (block, embedding, head) simulated alone at kernel granularity with its TP collectives
/// and CP ring steps on the scenario's network (models::PassMerger). The step runs a pass as
/// those units back to back and only slows them (SMs shared with DP and PP traffic), so this
/// stays below the simulated step and is at least plan_step_lower_bound_s. Costs a network and
/// a block program (a few microseconds once the process has routed the layout); the same
/// fallback as plan_step_lower_bound_s.
double plan_step_network_bound_s(const scenarios::Scenario& sc);

/// zb-h1 plans (one chunk per stage) take the same path with B and W apart: every pass of stage
/// s runs after the fill, and after the stage's last B that micro-batch's B still crosses stages
/// s-1 .. 0 and stage 0 runs its W before its optimizer. The W passes on stage s that follow its
/// last B in models::stage_schedule's zb-h1 order (they are not on that path):
int weight_passes_after_last_backward(int pp, int stage, int micro_batches);

}  // namespace clustersim::studies
