#pragma once
#include <string>
#include <vector>

#include "scenarios/scenario.hpp"
#include "scenarios/scenario_patch.hpp"

namespace clustersim::scenarios {

/// The most GPUs a scenario may have (cluster.gpus): the network's collective plans route every
/// DP member, so their cost grows with the square of the GPU count (on one core: 65,536 H100 ~8 s;
/// 131,072 ~23 s). `plan` searches no cluster above it.
inline constexpr int kMaxSimulatedGpus = 65536;

/// Loads and validates a scenario file (YAML text: only files and text a user gives). `overrides`
/// are applied before validation; their errors name each entry's origin. Throws ScenarioError.
Scenario load_scenario_file(const std::string& path, const ScenarioPatch& overrides = {});
Scenario load_scenario_string(const std::string& yaml, const std::string& source_name = "<string>",
                              const ScenarioPatch& overrides = {});
/// The same with "key.path=value" strings (the CLI's --set), read by ScenarioPatch::parse.
Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& overrides);
Scenario load_scenario_string(const std::string& yaml, const std::string& source_name,
                              const std::vector<std::string>& overrides);
/// A scenario written as a patch alone (a validation row, mfu's flags): validated by the same
/// checks as a file; errors cite `source_name` and the key path.
Scenario load_scenario(const ScenarioPatch& scenario, const std::string& source_name);

/// One line when the hardware profile and the topology disagree (the topology's node kind or
/// NVLink rate differs from the profile's node.default_topology: H100 SXM compute on
/// h100-pcie-ethernet, A100 on dgx-h100), else "". It says that the GPU keeps its profile's
/// clocks and board power, and which profiles ship in that topology (none: no profile of the
/// part that machine holds, e.g. H100 PCIe clocks and TDP, exists to use).
std::string hardware_topology_warning(const Scenario& s);

}  // namespace clustersim::scenarios
