#pragma once
// Gradient units and buckets of one pipeline stage: the units (LM head, blocks, embedding) in
// the order their backward completes, and Megatron DDP's buckets over them (every model chunk
// its own module with its own buckets), which DP reduces as they fill.
#include <cstddef>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "models/layer_ops.hpp"
#include "models/model_spec.hpp"
#include "models/training_spec.hpp"

namespace clustersim::models {

struct Bucket {
  double params = 0;
  int ready_unit = 0;  ///< index in backward order of the unit whose gradient completes it
};

struct GradientPlan {
  /// Parameters per unit in backward-completion order: for chunks vpp−1..0, the head (if the
  /// chunk has it), its blocks last to first, the embedding (if it has it).
  std::vector<double> unit_params;
  std::vector<int> chunk_unit_offset;  ///< per chunk: its first unit
  std::vector<Bucket> buckets;
  std::vector<int> bucket_of_unit;
  std::vector<std::size_t> chunk_bucket_begin, chunk_bucket_end;  ///< per chunk
  double params = 0;                   ///< the stage's parameters (this TP rank's share)
};

/// Parameters of block `layer` (≥ model layers: MTP module layer − layers) on this rank whose
/// gradients are reduced over DP: the whole block ÷ tp for a dense model (StepCosts::layer_params);
/// for an MoE model all but the routed experts (attention, norms, router, shared experts ÷ tp).
/// `pc`: count_params(m, ·) (its per-block counts do not depend on the sequence length).
double dense_block_params(const ModelSpec& m, const ParallelSpec& p, const StepCosts& c, const ParamCount& pc,
                          int layer);
/// Routed-expert parameters of one MoE layer on this rank (experts/ep experts, 1/etp of each),
/// reduced over the expert-data-parallel group.
double expert_layer_params(const ModelSpec& m, const ParallelSpec& p);

/// MoE layers on pipeline stage `stage` (every model chunk), its MTP modules included.
int stage_moe_layers(const ModelSpec& m, const ParallelSpec& p, const std::vector<int>& vlayers, int stage);

/// Parameters the optimizer of stage `stage` updates on one rank: its gradient units'
/// (sharded over DP × CP from ZeRO-1 on) and its routed experts' (sharded over the
/// expert-data-parallel group).
double stage_optimizer_params(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const StepCosts& c,
                              const std::vector<int>& vlayers, int stage);

/// The optimizer on one rank holding `local_params`: Adam's HBM traffic over them plus the
/// step's fixed work (StepCosts::step_fixed), before the step's scalar all-reduces.
double optimizer_update_s(const hardware::GpuSpec& gpu, const StepCosts& c, const TrainingSpec& t, double local_params);

/// The plan of pipeline stage `stage`; `vlayers` are the layers per virtual stage and
/// `bucket_cap` the bucket size in parameters (0: one bucket per unit).
GradientPlan plan_gradients(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const StepCosts& c,
                            const std::vector<int>& vlayers, int stage, double bucket_cap);

/// Unit index (see GradientPlan) of chunk `chunk`'s head (which < 0), block `which`, or
/// embedding (which ≥ the chunk's layers) on pipeline stage `stage`.
int unit_index(const GradientPlan& g, const ParallelSpec& p, const std::vector<int>& vlayers, int stage, int chunk,
               int which);

}  // namespace clustersim::models
