#pragma once
// Lower bounds on the simulated step time (simulate_step) from the step's own objects, no task
// graph: the kernel costs (StepCosts), the block program and pass merger the simulation runs, the
// pipeline's stage split and schedule order, and the optimizer's time on each stage. The plan
// search skips plans whose bound shows they cannot win (studies/plan_search.cpp); a bound is
// never a result.
#include <optional>

#include "hardware/gpu_spec.hpp"
#include "models/layer_ops.hpp"
#include "models/model_spec.hpp"
#include "models/training_spec.hpp"
#include "topologies/network.hpp"

namespace clustersim::models {

/// The kernel time of one rank's layers (forward, backward, recompute) over all micro-batches
/// on the least loaded pipeline stage, plus the pipeline fill the last stage waits for (pp − 1
/// chunk forwards). The simulation only adds to it (embedding, head, the rest of the bubble,
/// exposed communication, contention). 0 (no bound) for a hybrid stack, whose layers cost less
/// than the dense block counted per layer, for sparse or compressed attention (DSA, DeepSeek-V4),
/// whose cores cost far less than a dense one at long sequences, and with training.bf16_layers
/// (blocks of two precisions).
double step_kernel_floor_s(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const StepCosts& c);

/// The busiest pipeline stage's critical path with every pass at its kernel time alone. Stage s
/// cannot start before micro-batch 0's forward has crossed the virtual stages before it, then
/// runs all its passes one after another on its compute stream, and after its last pass (a
/// backward) that micro-batch's gradient still crosses the virtual stages before it down to
/// stage 0, whose optimizer (optimizer_update_s over its parameters) runs last. zb-h1 (one chunk
/// per stage) takes the same path with B and W apart (weight_passes_after_last_backward). None
/// where those assumptions are not checked: MoE and hybrid stacks and MTP modules (whose blocks
/// are not StepCosts' dense block), BF16 blocks (training.bf16_layers), split schedules other than zb-h1.
std::optional<double> step_pipeline_bound_s(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                            const hardware::GpuSpec& gpu, const StepCosts& c);

/// The same critical path with every pass at the duration the step gives its merged task: each
/// unit (block of each kind, embedding, head with its MTP modules) simulated alone at kernel
/// granularity with its TP collectives, CP ring steps and MoE dispatch and combine on `network`
/// (PassMerger, the simulation's own). The step runs a pass as those units back to back and only
/// slows them (SMs shared with DP and PP traffic), so this stays below the simulated step. Covers
/// dense, MoE and hybrid stacks and MTP modules; none for split schedules other than zb-h1.
std::optional<double> step_pass_bound_s(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                        const hardware::GpuSpec& gpu, const StepCosts& c,
                                        const topologies::Network& network);

}  // namespace clustersim::models
