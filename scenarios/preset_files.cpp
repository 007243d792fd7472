#include "scenarios/preset_files.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "scenarios/error.hpp"
#include "scenarios/load_node.hpp"
#include "scenarios/presets.hpp"

namespace clustersim::scenarios {

namespace fs = std::filesystem;

bool names_a_file(const std::string& value) {
  auto ends_with = [&](const char* s) {
    const std::size_t n = std::strlen(s);
    return value.size() >= n && value.compare(value.size() - n, n, s) == 0;
  };
  return value.find('/') != std::string::npos || ends_with(".yaml") || ends_with(".yml");
}

namespace {

const std::map<std::string, std::string>& presets_of(const std::string& section) {
  return section == "model" ? model_preset_texts() : section == "topology" ? topology_preset_texts() : hardware_preset_texts();
}

// `over`'s keys replace `base`'s; mappings merge key by key (as an inline `base:` does in load.cpp).
YAML::Node merged_over(const YAML::Node& base, const YAML::Node& over) {
  YAML::Node out = YAML::Clone(base);
  for (const auto& kv : over) {
    if (!kv.first.IsScalar()) continue;
    const std::string k = kv.first.Scalar();
    if (kv.second.IsMap() && out[k] && out[k].IsMap()) out[k] = merged_over(out[k], kv.second);
    else out[k] = YAML::Clone(kv.second);
  }
  return out;
}

PresetFile read_file(const std::string& value, const std::string& section, const std::string& scenario_source,
                     const std::string& where, int depth);

// The definition `base:` names in the file at `path` (a preset name, or a file relative to `path`).
YAML::Node base_definition(const YAML::Node& base, const std::string& section, const std::string& path, int depth) {
  const std::string at = fmt::format("{}:{}:{}: base", path, base.Mark().line + 1, base.Mark().column + 1);
  if (!base.IsScalar() || base.Scalar().empty())
    throw ScenarioError(fmt::format("{}: expected a {} preset name or a YAML file path", at, section));
  const std::string name = base.Scalar();
  if (names_a_file(name)) {
    if (depth >= 8) throw ScenarioError(fmt::format("{}: '{}': more than 8 files chained through base:", at, name));
    return read_file(name, section, path, at, depth + 1).node;
  }
  const auto& presets = presets_of(section);
  const auto it = presets.find(name);
  if (it == presets.end()) {
    std::string names;
    for (const auto& [k, v] : presets) names += (names.empty() ? "" : ", ") + k;
    throw ScenarioError(fmt::format("{}: unknown {} preset '{}'; available: {} (or a YAML file path)", at, section, name, names));
  }
  return parse_scenario_yaml(it->second, fmt::format("{}/{}.yaml", section == "model" ? "models/presets"
                                                                   : section == "topology" ? "topologies/presets"
                                                                                           : "hardware/profiles", name));
}

PresetFile read_file(const std::string& value, const std::string& section, const std::string& scenario_source,
                     const std::string& where, int depth) {
  fs::path path(value);
  if (path.is_relative() && !scenario_source.empty() && scenario_source.front() != '<') {
    const fs::path folder = fs::path(scenario_source).parent_path();
    if (!folder.empty()) path = (folder / path).lexically_normal();
  }
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw ScenarioError(fmt::format("{}: '{}' is a directory; expected a {} YAML file", where, path.string(), section));
  std::ifstream in(path);
  if (!in)
    throw ScenarioError(fmt::format("{}: cannot read {} file '{}' ({}); a preset name or a YAML file path is allowed",
                                    where, section, path.string(), std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  YAML::Node doc = parse_scenario_yaml(text.str(), path.string());
  if (!doc.IsMap()) throw ScenarioError(fmt::format("{}: expected a mapping of {} keys", path.string(), section));
  if (doc[section] && doc[section].IsMap()) doc = doc[section];
  const std::string name = doc["name"] && doc["name"].IsScalar() ? doc["name"].Scalar() : path.stem().string();
  if (doc["base"]) {
    YAML::Node own = YAML::Clone(doc);
    own.remove("base");
    doc = merged_over(base_definition(doc["base"], section, path.string(), depth), own);
  }
  return {doc, name, path.string()};
}

}  // namespace

PresetFile read_preset_file(const std::string& value, const std::string& section, const std::string& scenario_source,
                            const std::string& where) {
  return read_file(value, section, scenario_source, where, 0);
}

}  // namespace clustersim::scenarios
