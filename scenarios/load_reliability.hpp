#pragma once
// The `reliability:` and `data:` sections of a scenario (see models/reliability.hpp).
#include "models/reliability.hpp"
#include "scenarios/yaml_reader.hpp"

namespace clustersim::scenarios {

models::ReliabilitySpec read_reliability(const YamlReader& r);
/// `seq_len` is training.seq_len: sample lengths are validated against it.
models::DataSpec read_data(const YamlReader& r, int seq_len);

}  // namespace clustersim::scenarios
