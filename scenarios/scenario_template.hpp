#pragma once
// A scenario parsed once and instantiated many times with different overrides: what a sweep
// does for every configuration, without re-reading the YAML text each time.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/scenario.hpp"
#include "scenarios/scenario_patch.hpp"

namespace clustersim::scenarios {

/// Not thread-safe (yaml-cpp trees are not): give each thread its own copy.
class ScenarioTemplate {
 public:
  /// Throws ScenarioError on a YAML syntax error.
  ScenarioTemplate(const std::string& yaml, const std::string& source_name);
  static ScenarioTemplate from_file(const std::string& path);
  /// A scenario a program wrote as a patch (plan's base): built once, no YAML text; errors name
  /// `source_name` without a line.
  ScenarioTemplate(const ScenarioPatch& scenario, const std::string& source_name);
  ScenarioTemplate(const ScenarioTemplate& other);
  ScenarioTemplate& operator=(const ScenarioTemplate&) = delete;
  ScenarioTemplate(ScenarioTemplate&&) noexcept;
  ~ScenarioTemplate();

  /// Same result as load_scenario_string(yaml, source_name, overrides); throws ScenarioError.
  Scenario instantiate(const ScenarioPatch& overrides = {}) const;
  /// The same with "key.path=value" strings (--set), read by ScenarioPatch::parse.
  Scenario instantiate(const std::vector<std::string>& overrides) const;
  /// The scalar at a dotted key path of the file as written (no presets, no overrides).
  std::optional<std::string> scalar_at(const std::string& key_path) const;
  /// Whether the file as written has a key at the dotted path (of any kind, null excepted).
  bool has(const std::string& key_path) const;
  const std::string& text() const;  ///< the YAML (a patch's as ScenarioPatch::yaml())
  const std::string& source() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace clustersim::scenarios
