#include "scenarios/preset_catalog.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <sstream>

#include "scenarios/error.hpp"
#include "scenarios/presets.hpp"
#include "scenarios/yaml_reader.hpp"

namespace clustersim::scenarios {
namespace {

const std::vector<std::pair<std::string, const std::map<std::string, std::string>*>>& kinds() {
  static const std::vector<std::pair<std::string, const std::map<std::string, std::string>*>> k = {
      {"models", &model_preset_texts()}, {"hardware", &hardware_preset_texts()}, {"topologies", &topology_preset_texts()}};
  return k;
}

std::string describe(const std::string& text) {
  try {
    const YAML::Node n = YAML::Load(text);
    if (n.IsMap() && n["description"] && n["description"].IsScalar()) return n["description"].Scalar();
  } catch (const YAML::Exception&) {
  }
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("#", 0) == 0) return line.substr(line.find_first_not_of("# ") == std::string::npos ? line.size() : line.find_first_not_of("# "));
  return "";
}

}  // namespace

std::vector<PresetInfo> list_presets(const std::string& kind) {
  std::vector<PresetInfo> out;
  std::vector<std::string> names;
  for (const auto& [k, texts] : kinds()) {
    names.push_back(k);
    if (!kind.empty() && kind != k) continue;
    for (const auto& [name, text] : *texts) out.push_back({k, name, describe(text)});
  }
  if (out.empty() && !kind.empty())
    throw ScenarioError(fmt::format("presets: unknown kind '{}'; allowed: {}", kind, join(names)));
  return out;
}

std::string preset_text(const std::string& name) {
  std::vector<std::string> all;
  for (const auto& [k, texts] : kinds()) {
    auto it = texts->find(name);
    if (it != texts->end()) return it->second;
    for (const auto& [n, t] : *texts) all.push_back(n);
  }
  const std::string near = nearest(name, all);
  throw ScenarioError(fmt::format("presets show: unknown preset '{}'{}; `clustersim presets` lists them", name,
                                  near.empty() ? "" : " (did you mean '" + near + "'?)"));
}

}  // namespace clustersim::scenarios
