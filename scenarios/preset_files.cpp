#include "scenarios/preset_files.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "scenarios/error.hpp"
#include "scenarios/load_node.hpp"

namespace clustersim::scenarios {

namespace fs = std::filesystem;

bool names_a_file(const std::string& value) {
  auto ends_with = [&](const char* s) {
    const std::size_t n = std::strlen(s);
    return value.size() >= n && value.compare(value.size() - n, n, s) == 0;
  };
  return value.find('/') != std::string::npos || ends_with(".yaml") || ends_with(".yml");
}

PresetFile read_preset_file(const std::string& value, const std::string& section, const std::string& scenario_source,
                            const std::string& where) {
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
  return {doc, name, path.string()};
}

}  // namespace clustersim::scenarios
