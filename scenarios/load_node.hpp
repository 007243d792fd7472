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
/// The top-level keys of a parsed scenario whose value is neither a mapping nor null.
std::vector<std::string> unmapped_keys(const YAML::Node& root);
/// Loads `root` with `overrides` applied, then validates, leaving `root` as it is: it is shared
/// by many loads (a sweep's points, a plan's candidates). A patch of top-level keys and keys one
/// level down is read through, without copying the tree; any other is applied to a copy.
/// `unmapped`: unmapped_keys(root). `marks`: the scenario as parsed, whose lines errors cite.
Scenario load_scenario_shared(const YAML::Node& root, const std::vector<std::string>& unmapped,
                              const std::string& source, const ScenarioPatch& overrides, const YAML::Node& marks);

}  // namespace clustersim::scenarios
