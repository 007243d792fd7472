#pragma once
// The block program of a heterogeneous stack: per layer kind (attention: standard, MLA or
// sliding-window; MLP: dense or MoE) one UnitProgram, the MoE block's dispatch / combine
// all-to-alls over the EP group of the scenario's network, and the MTP modules appended to the
// LM head on the last stage. A dense model gets dense_block_program() unchanged.
#include "hardware/gpu_spec.hpp"
#include "models/model_spec.hpp"
#include "models/moe_ops.hpp"
#include "models/step_program.hpp"

namespace clustersim::models {

/// The step's block program for `m` (dense_block_program() when m has no MoE, MLA,
/// sliding-window layer or MTP module).
BlockProgram block_program(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                           const hardware::GpuSpec& gpu, const StepCosts& c, const topologies::Network& net);

/// The routed-expert items of one MoE block (router, permute, dispatch, grouped experts, combine,
/// unpermute; backward in reverse), for `ops` of the same layer.
RoutedProgram routed_program(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const MoeLayerOps& ops,
                             const topologies::Network& net);

/// The expert layout of `p` as moe_layer_ops takes it.
inline ExpertParallel expert_parallel(const ParallelSpec& p) { return {p.ep, p.etp, p.edp()}; }

}  // namespace clustersim::models
