#pragma once
// A user's own model, hardware profile or topology given as a file wherever a preset name is accepted
// (`hardware: ./my-cluster.yaml`, `model: ../models/mine.yaml`, `network.topology: ./fabric.yaml`).
// A value names a file when it contains '/' or ends in .yaml / .yml; a relative path is taken from the
// scenario file's folder (from the working directory for scenarios that are not files, e.g. --set on
// a preset or the Python API's dicts).
#include <yaml-cpp/yaml.h>

#include <string>

namespace clustersim::scenarios {

bool names_a_file(const std::string& value);

struct PresetFile {
  YAML::Node node;   ///< the definition: the whole document, or its `section:` mapping when it has one
  std::string name;  ///< the `name:` inside, else the file's stem
  std::string path;  ///< as opened, for messages
};

/// Reads `value` for `section` ("model", "hardware", "topology"). A document whose top level holds a
/// `section:` mapping (what `clustersim import hf` writes) contributes that mapping. A `base:` key (a
/// preset name, or a file relative to this one) is resolved here: the file's keys override the base's
/// (what `clustersim calibrate --runs ... --out` writes); an unknown base names file:line. Throws ScenarioError
/// naming `where` (file:line of the key that names the file) when the file cannot be read or parsed.
PresetFile read_preset_file(const std::string& value, const std::string& section, const std::string& scenario_source,
                            const std::string& where);

}  // namespace clustersim::scenarios
