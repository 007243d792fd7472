#pragma once
// Preset YAML texts (models/presets, hardware/profiles, topologies/presets), embedded into the binary at build
// time so that the clustersim executable works from any directory.
#include <map>
#include <string>

namespace clustersim::scenarios {

const std::map<std::string, std::string>& model_preset_texts();
const std::map<std::string, std::string>& hardware_preset_texts();
const std::map<std::string, std::string>& topology_preset_texts();

}  // namespace clustersim::scenarios
