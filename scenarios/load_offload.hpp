#pragma once
// training.activation_offload_layers (models::TrainingSpec::activation_offload_layers).
#include "models/model_spec.hpp"
#include "models/training_spec.hpp"
#include "scenarios/yaml_reader.hpp"

namespace clustersim::scenarios {

/// Reads training.activation_offload_layers from the `training:` reader `tr` once recompute and
/// the CUDA-graph keys are read. Megatron-Core's rules (TransformerConfig.__post_init__): 0 to
/// layers − 1 blocks, pipeline parallelism off, no activation recompute, no CUDA graphs.
void read_activation_offload(const YamlReader& tr, const models::ModelSpec& m, const models::ParallelSpec& p,
                             models::TrainingSpec* t);

}  // namespace clustersim::scenarios
