#pragma once
// The `model:` section of a scenario or a model preset (see models/model_spec.hpp).
#include <string>

#include "models/model_spec.hpp"
#include "scenarios/yaml_reader.hpp"

namespace clustersim::scenarios {

/// Reads and validates a model definition; `name` is used when the mapping has no `name`.
models::ModelSpec read_model(const YamlReader& r, const std::string& name);

/// The model preset `name` (models/presets/NAME.yaml, compiled in). Throws ScenarioError for an
/// unknown name. For tools and tests that need a model without a whole scenario.
models::ModelSpec model_preset(const std::string& name);

}  // namespace clustersim::scenarios
