#pragma once
// Loading from an already parsed YAML tree, for code inside scenarios/ that parses a scenario
// once and instantiates it many times (scenario_template.cpp). Not for use outside scenarios/:
// yaml-cpp stays behind this layer.
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "scenarios/scenario.hpp"
#include "scenarios/scenario_patch.hpp"

namespace clustersim::scenarios {

/// Parses YAML text; a syntax error becomes a ScenarioError naming source:line:column.
YAML::Node parse_scenario_yaml(const std::string& text, const std::string& source);
/// The tree of a scenario written as a patch (its entries applied to an empty mapping).
YAML::Node patch_tree(const ScenarioPatch& scenario);
/// Applies `overrides` to `root`, which it modifies, then validates. `marks`: the scenario as
/// parsed, whose lines errors cite (root may be a copy that lost them).
Scenario load_scenario_node(YAML::Node root, const std::string& source, const ScenarioPatch& overrides,
                            const YAML::Node& marks);

}  // namespace clustersim::scenarios
