#pragma once
// training.activation_offload_layers in the block program (models/step_program_moe.cpp).
#include "hardware/gpu_spec.hpp"
#include "models/model_spec.hpp"
#include "models/step_program.hpp"
#include "models/training_spec.hpp"
#include "topologies/network.hpp"

namespace clustersim::models {

/// The first training.activation_offload_layers blocks of `prog` as variants whose passes wait for
/// their activations' copy to and from host memory where it outlasts the neighbouring block's
/// compute (what is assumed: block_offload.cpp).
void offload_activations(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu,
                         const topologies::Network& net, BlockProgram* prog);

}  // namespace clustersim::models
