#pragma once
// The plan search's lower bounds on a plan's simulated step time (models/step_bound.hpp) for a
// loaded scenario, for skipping plans that cannot win (studies/plan_search.cpp).
#include "scenarios/scenario.hpp"

namespace clustersim::studies {

/// models::step_pipeline_bound_s on the scenario's kernel costs (no network: cheap), else (MoE,
/// hybrid, MTP) the kernel-only step_time_lower_bound_s.
double plan_step_lower_bound_s(const scenarios::Scenario& sc);

/// models::step_pass_bound_s on the costs and network scenarios::simulate() builds (a few
/// microseconds once the process has routed the layout), else step_time_lower_bound_s.
double plan_step_network_bound_s(const scenarios::Scenario& sc);

/// The bound the plan search screens every plan with: plan_step_lower_bound_s where the kernel
/// pipeline bound applies (cheap), else (MoE, hybrid, MTP: the kernel floor is loose there) the
/// pass bound at once, when it is higher; `passes` says which (plan_step_network_bound_s).
double plan_step_screen_bound_s(const scenarios::Scenario& sc, bool* passes);

}  // namespace clustersim::studies
