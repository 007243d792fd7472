#pragma once
#include <string>
#include <vector>

#include "scenarios/scenario.hpp"

namespace clustersim::scenarios {

/// Loads and validates a scenario file. `overrides` are "key.path=value" strings applied to the
/// YAML before validation (the CLI's --set). Throws ScenarioError on any problem.
Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& overrides = {});
Scenario load_scenario_string(const std::string& yaml, const std::string& source_name = "<string>",
                              const std::vector<std::string>& overrides = {});

}  // namespace clustersim::scenarios
