#pragma once
// Memory of the Mixture-of-Experts part of a model on one rank: expert model states sharded by
// EP, ETP and the expert-data-parallel group, routed activations and all-to-all buffers. The
// dense part (attention, dense layers, embeddings) stays in models/memory.cpp.
#include "models/model_spec.hpp"
#include "models/moe_ops.hpp"
#include "models/training_spec.hpp"

namespace clustersim::models {

struct MoeMemory {
  double expert_params = 0;           ///< routed-expert parameters held on this rank (unsharded by ZeRO)
  double expert_weights_bytes = 0;
  double expert_gradients_bytes = 0;
  double expert_optimizer_bytes = 0;
  double routed_activation_bytes = 0; ///< saved for backward per MoE layer per micro-batch
  double dispatch_buffer_bytes = 0;   ///< all-to-all send + receive buffers of one layer
  bool weights_sharded = false;       ///< ZeRO-3 over edp, gathered layer by layer (not under pipelining)
  bool gradients_sharded = false;     ///< ZeRO-2/3 over edp, reduce-scattered every micro-batch (pp 1)
  /// Full weights / gradients of the two layers gathered at a time when they are sharded.
  double gathered_weight_bytes = 0, gathered_gradient_bytes = 0;
};

/// Bytes per token an MLP of width `f` (per rank) saves of its fc1 output for the activation's
/// backward: gate and up when gated, in FP8 under activation_fp8_input_store (which the loader
/// allows with SwiGLU only).
inline double fc1_output_saved_bytes(const ModelSpec& m, const TrainingSpec& t, double f) {
  return gated(m.activation) ? 2 * f * t.swiglu_input_bytes() : f * hardware::storage_bytes(t.precision);
}

/// For `moe_layers` MoE layers on this rank (its pipeline stage's share): each layer keeps
/// experts/ep routed experts, each 1/etp of its weights. Bytes per parameter as the dense
/// accounting (models/memory.hpp): weights 2 (4 in fp32/tf32), gradients 4 with fp32 reduction
/// else 2, optimizer 12 (8 with fp32 weights). ZeRO shards expert states over the
/// expert-data-parallel group (Megatron's distributed optimizer uses the expert-DP group for
/// expert parameters): optimizer with stage ≥ 1, gradients ≥ 2, weights 3 — under pipelining
/// (pp > 1) gradients and ZeRO-3 weights stay whole for the step, as for the dense parameters.
/// Routed activations are what the experts' backward reads on the busiest rank (see
/// moe_memory.cpp); shared experts are counted with them. `ops` is moe_layer_ops for the same
/// layer (tokens and load imbalance).
MoeMemory moe_memory(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const ExpertParallel& x,
                     int moe_layers, const MoeLayerOps& ops);

}  // namespace clustersim::models
