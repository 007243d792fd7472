#pragma once
#include <string>
#include <vector>

#include "scenarios/scenario.hpp"

namespace clustersim::scenarios {

/// The most GPUs a scenario may have (cluster.gpus): the network's collective plans route every
/// DP member, so their cost grows with the square of the GPU count (on one core: 65,536 H100 ~8 s;
/// 131,072 ~23 s). `plan` searches no cluster above it.
inline constexpr int kMaxSimulatedGpus = 65536;

/// Loads and validates a scenario file. `overrides` are "key.path=value" strings applied to the
/// YAML before validation (the CLI's --set). Throws ScenarioError on any problem.
Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& overrides = {});
Scenario load_scenario_string(const std::string& yaml, const std::string& source_name = "<string>",
                              const std::vector<std::string>& overrides = {});

}  // namespace clustersim::scenarios
