#pragma once
// Pipeline-parallel structure: which layers each (virtual) stage holds, and the order in which
// a stage runs its forward and backward passes under GPipe, 1F1B and interleaved 1F1B.
// The bubble is not computed here: it emerges when the step simulation runs these orders
// with the stages' data dependencies (models/step.cpp).
#include <vector>

#include "models/training_spec.hpp"

namespace clustersim::models {

/// One pass of one micro-batch through one model chunk on a stage.
struct PipeOp {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;  ///< model chunk on this rank; virtual stage = chunk·pp + stage
};

/// Layers of each virtual stage, pp·vpp entries in pipeline order: p.pp_layers when given,
/// else an even split (the remainder going to the last stages, which also lack the embedding).
std::vector<int> virtual_stage_layers(int layers, const ParallelSpec& p);

/// The order of passes on pipeline stage `stage` (Megatron-LM schedules.py):
///   gpipe: every forward, then every backward;
///   1f1b: pp−stage−1 warm-up forwards, then one forward/one backward, then the cool-down;
///   interleaved: warm-up (pp−stage−1)·2 + (vpp−1)·pp chunk-forwards, micro-batches taken in
///   groups of pp per chunk.
std::vector<PipeOp> stage_schedule(const ParallelSpec& p, int stage, int micro_batches);

/// Peak over the schedule of the layer-micro-batches whose forward ran and backward has not:
/// how many blocks' activations stage `stage` holds at once.
int peak_layers_in_flight(const ParallelSpec& p, int stage, int micro_batches,
                          const std::vector<int>& vstage_layers);

}  // namespace clustersim::models
