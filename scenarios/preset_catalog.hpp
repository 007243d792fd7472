#pragma once
// The shipped presets (model presets, hardware profiles, topologies) by kind, each with a one-line
// description, for `clustersim presets`.
#include <string>
#include <vector>

namespace clustersim::scenarios {

struct PresetInfo {
  std::string kind;         ///< "models", "hardware" or "topologies"
  std::string name;
  std::string description;  ///< the preset's `description:`, else its first comment line
};

/// Every preset of `kind` ("models", "hardware", "topologies"; empty: all), sorted by kind then name.
/// Throws ScenarioError for another kind.
std::vector<PresetInfo> list_presets(const std::string& kind);

/// The YAML text of the preset called `name` (any kind); throws ScenarioError with a suggestion.
std::string preset_text(const std::string& name);

}  // namespace clustersim::scenarios
