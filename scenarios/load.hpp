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

/// One line when the hardware profile and the topology disagree (the topology's node kind or
/// NVLink rate differs from the profile's node.default_topology: H100 SXM compute on
/// h100-pcie-ethernet, A100 on dgx-h100), else "". It says that the GPU keeps its profile's
/// clocks and board power, and which profiles ship in that topology (none: no profile of the
/// part that machine holds, e.g. H100 PCIe clocks and TDP, exists to use).
std::string hardware_topology_warning(const Scenario& s);

}  // namespace clustersim::scenarios
