#pragma once
// The checks `clustersim sweep` makes before it runs, shared with the Python module's sweep(), so
// both front ends refuse the same arguments with the same one-line message (issue 31, item 2).
#include <string>
#include <vector>

#include "scenarios/scenario_template.hpp"
#include "studies/sweep_space.hpp"

namespace clustersim::tools {

/// --threads: 0 (every core) to 4096; throws scenarios::ScenarioError naming --threads.
void check_threads(int threads);

struct SweepSetup {
  std::vector<studies::Axis> axes;
  studies::SweepSpace space;
};

/// The space of `clustersim sweep SCENARIO --vary ... [--auto-parallel] --set ...`, after every
/// check the CLI makes: the axes' syntax, a key the loader does not know (named once, with its
/// origin, instead of a sweep of invalid rows), --auto-parallel without cluster.gpus, --threads.
SweepSetup sweep_setup(const scenarios::ScenarioTemplate& base, const std::string& source, const std::vector<std::string>& vary,
                       bool auto_parallel, const std::vector<std::string>& sets, const std::string& schedules, int threads);

}  // namespace clustersim::tools
