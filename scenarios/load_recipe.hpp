#pragma once
// The training-recipe keys of `training:` (attention_impl, flash_attention, fp8_attention,
// fp8_recipe, fp8_auto_filter, cuda_graphs, bf16_layers), checked against what the GPU and the stacks offer
// (docs/recipes.md). Called after training.precision has been read.
#include "hardware/gpu_spec.hpp"
#include "models/model_spec.hpp"
#include "models/training_spec.hpp"
#include "scenarios/yaml_reader.hpp"

namespace clustersim::scenarios {

void read_recipe_keys(const YamlReader& tr, const hardware::GpuSpec& gpu, models::TrainingSpec* t);

/// training.bf16_layers {first, last}: Megatron-Core's rules (TransformerConfig.__post_init__):
/// a low training precision, not FP8 delayed scaling, and each count at most layers / pp.
void read_bf16_layers(const YamlReader& tr, const models::ModelSpec& m, const models::ParallelSpec& p,
                      models::TrainingSpec* t);

/// training.module_precision {attention_linears, moe_latent_proj, mamba_out_proj, mtp: bf16 |
/// fp8 | mxfp8 | nvfp4}: a quantization recipe's modules in their own precision (Megatron-Core
/// quant_recipe). A low training precision, modules the model has, Tensor Cores the GPU has.
void read_module_precision(const YamlReader& tr, const models::ModelSpec& m, const hardware::GpuSpec& gpu,
                           models::TrainingSpec* t);

/// The training precisions the GPU has Tensor Cores for, comma-separated (for errors).
std::string precisions_of(const hardware::GpuSpec& gpu);
/// "FP8", "MXFP8", ... for messages.
std::string upper_name(hardware::Precision p);

}  // namespace clustersim::scenarios
