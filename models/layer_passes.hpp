#pragma once
// The kernels of every block of the model as it runs, for tables of kernels (run --explain's
// roofline, the report's assumptions): dense blocks run StepCosts' layer ops; an MoE block runs
// them without the dense MLP and with the routed MLP (router, permute/unpermute, grouped expert
// GEMMs, shared experts: moe_layer_ops); an MLA model's blocks run mla_attention_ops in place of
// QKV, the attention core and the output projection — the same ops the step program simulates.
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "models/layer_ops.hpp"
#include "models/model_spec.hpp"
#include "models/training_spec.hpp"

namespace clustersim::models {

/// Ops run by `layers` blocks (negative: ops the dense block has that those blocks do not run).
struct LayerPass {
  PassCost pass;
  double layers = 0;
};

/// Every block's forward (or backward) kernels per micro-batch on one rank, as signed terms whose
/// sum over layers is the model's blocks.
std::vector<LayerPass> layer_passes(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                    const hardware::GpuSpec& gpu, const StepCosts& c, bool backward);

/// The blocks' recomputed forward before their backward, per micro-batch (times
/// StepCosts::recompute_share of the blocks): full recompute reruns each block's forward as it
/// runs; selective recompute the dense attention core when core_attn is among its modules (the
/// step's selective_recompute_s); other modules' reruns are inside the block programs.
std::vector<LayerPass> recompute_passes(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                        const hardware::GpuSpec& gpu, const StepCosts& c);

}  // namespace clustersim::models
