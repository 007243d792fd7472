#pragma once
// The --auto-parallel grid of a sweep over a base scenario: the vpp values follow the model's
// layers (vpp_values) when one model is swept.
#include <string>
#include <vector>

#include "scenarios/scenario_template.hpp"
#include "studies/sweep_space.hpp"

namespace clustersim::studies {

/// PlanGrid with `layers` set from the base scenario (with `sets` applied) when no axis varies
/// the model; the default grid (vpp 1, 2, 4) when the model varies or the base alone does not load
/// (the sweep then reports each row's own error).
PlanGrid auto_parallel_grid(const scenarios::ScenarioTemplate& base, const std::vector<Axis>& axes,
                            const std::vector<std::string>& sets);

/// The sweep space of `clustersim sweep` over `base` (cluster.gpus from the base; with
/// auto_parallel the grid above, plus ep / etp for MoE models): the one code path of the CLI
/// and the Python module's sweep(). `schedules` (--schedules, e.g. "1f1b,zb-h1"): the pipeline
/// schedules the grid searches (parse_schedules); "" searches PlanGrid's default list. Throws
/// ScenarioError for a bad list, or a list without auto_parallel.
SweepSpace sweep_space_for(const scenarios::ScenarioTemplate& base, const std::vector<Axis>& axes, bool auto_parallel,
                           const std::vector<std::string>& sets, const std::string& schedules = "");

}  // namespace clustersim::studies
