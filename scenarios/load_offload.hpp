#pragma once
// The training keys that shrink saved activations at a cost in time: activation_offload_layers
// and activation_fp8_input_store (models::TrainingSpec).
#include "models/model_spec.hpp"
#include "models/training_spec.hpp"
#include "scenarios/yaml_reader.hpp"

namespace clustersim::scenarios {

/// Reads training.activation_offload_layers from the `training:` reader `tr` once recompute and
/// the CUDA-graph keys are read. Megatron-Core's rules (TransformerConfig.__post_init__): 0 to
/// layers − 1 blocks, pipeline parallelism off, no activation recompute, no CUDA graphs.
void read_activation_offload(const YamlReader& tr, const models::ModelSpec& m, const models::ParallelSpec& p,
                             models::TrainingSpec* t);

/// Reads training.activation_fp8_input_store (default false, Megatron-Core's). SwiGLU only, as
/// Megatron-Core's TransformerConfig requires ("Storing activation input in FP8 is supported only
/// for SwiGLU").
void read_activation_fp8_input_store(const YamlReader& tr, const models::ModelSpec& m, models::TrainingSpec* t);

}  // namespace clustersim::scenarios
