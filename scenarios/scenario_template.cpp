#include "scenarios/scenario_template.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "scenarios/error.hpp"
#include "scenarios/load_node.hpp"

namespace clustersim::scenarios {

struct ScenarioTemplate::Impl {
  std::string text;
  std::string source;
  YAML::Node root;  ///< never modified: every instantiate reads it
  std::vector<std::string> unmapped;   ///< unmapped_keys(root)
  std::optional<ScenarioPatch> patch;  ///< set when built from a patch
};

ScenarioTemplate::ScenarioTemplate(const std::string& yaml, const std::string& source_name)
    : impl_(std::make_unique<Impl>(Impl{yaml, source_name, parse_scenario_yaml(yaml, source_name), {}, std::nullopt})) {
  impl_->unmapped = unmapped_keys(impl_->root);
}

ScenarioTemplate::ScenarioTemplate(const ScenarioPatch& scenario, const std::string& source_name)
    : impl_(std::make_unique<Impl>(Impl{scenario.yaml(), source_name, patch_tree(scenario), {}, scenario})) {
  impl_->unmapped = unmapped_keys(impl_->root);
}

ScenarioTemplate ScenarioTemplate::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ScenarioError(fmt::format("{}: cannot open the scenario file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ScenarioTemplate(ss.str(), path);
}

// A copy parses the text again so that the two share no yaml-cpp memory (threads).
ScenarioTemplate::ScenarioTemplate(const ScenarioTemplate& other)
    : ScenarioTemplate(other.impl_->patch ? ScenarioTemplate(*other.impl_->patch, other.impl_->source)
                                          : ScenarioTemplate(other.impl_->text, other.impl_->source)) {}
ScenarioTemplate::ScenarioTemplate(ScenarioTemplate&&) noexcept = default;
ScenarioTemplate::~ScenarioTemplate() = default;

Scenario ScenarioTemplate::instantiate(const std::vector<std::string>& overrides) const {
  return instantiate(ScenarioPatch::parse(overrides));
}

Scenario ScenarioTemplate::instantiate(const ScenarioPatch& overrides) const {
  // A patch-built tree has no lines to cite (its values name no file line).
  return load_scenario_shared(impl_->root, impl_->unmapped, impl_->source, overrides,
                              impl_->patch ? YAML::Node(YAML::NodeType::Undefined) : impl_->root);
}

namespace {

// The node at a dotted key path of `root`, if every step is a mapping that has the key.
std::optional<YAML::Node> node_at(const YAML::Node& root, const std::string& key_path) {
  std::vector<YAML::Node> chain{root};
  std::stringstream ss(key_path);
  for (std::string part; std::getline(ss, part, '.');) {
    const YAML::Node& cur = chain.back();
    if (!cur.IsMap()) return std::nullopt;
    const YAML::Node next = cur[part];
    if (!next) return std::nullopt;
    chain.push_back(next);
  }
  return chain.back();
}

}  // namespace

std::optional<std::string> ScenarioTemplate::scalar_at(const std::string& key_path) const {
  const auto n = node_at(impl_->root, key_path);
  if (!n || !n->IsScalar()) return std::nullopt;
  return n->Scalar();
}

bool ScenarioTemplate::has(const std::string& key_path) const {
  const auto n = node_at(impl_->root, key_path);
  return n && !n->IsNull();
}

const std::string& ScenarioTemplate::text() const { return impl_->text; }
const std::string& ScenarioTemplate::source() const { return impl_->source; }

}  // namespace clustersim::scenarios
