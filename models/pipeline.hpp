#pragma once
// Pipeline-parallel structure: which layers each (virtual) stage holds, and the order in which
// a stage runs its forward and backward passes under GPipe, 1F1B and interleaved 1F1B.
// The bubble is not computed here: it emerges when the step simulation runs these orders
// with the stages' data dependencies (emit_pipeline below; models/step.cpp builds the passes).
// A new schedule (zero-bubble, DualPipe) is a new order here, using weight_grad passes where it
// splits the backward; the dependency rule below covers them.
#include <functional>
#include <string>
#include <vector>

#include "models/training_spec.hpp"
#include "sim/task_graph.hpp"

namespace clustersim::models {

/// forward (F), backward (B: input and weight gradients, or input gradients only when the
/// schedule also has a weight_grad pass for the micro-batch) and weight_grad (W).
enum class PassKind { forward, backward, weight_grad };

/// One pass of one micro-batch through one model chunk on a stage.
struct PipeOp {
  PassKind kind = PassKind::forward;
  int micro_batch = 0;
  int chunk = 0;  ///< model chunk on this rank; virtual stage = chunk·pp + stage
  /// Runs beside a pass of the other direction on its rank, which can hide its MoE exchanges
  /// (training.moe_a2a_overlap): Megatron-Core's combined 1F1B pairs each forward after the
  /// warm-up's with the previous backward (one more warm-up forward and one more cool-down
  /// backward than the plain schedule's run alone: schedules.py get_pp_rank_microbatches,
  /// combined_1f1b.py; without pipelining the first forward and the last backward); DualPipeV
  /// pairs its main steps' chunks. GPipe and ZB-V pair none.
  bool paired = false;
  bool forward() const { return kind == PassKind::forward; }
};

/// A pass of one micro-batch on one virtual stage.
struct PassRef {
  PassKind kind = PassKind::forward;
  int micro_batch = 0;
  int vstage = 0;
};

/// The schedule's dependency rule: the pass whose output `op` on virtual stage `vstage`
/// consumes, if any. F takes the previous virtual stage's F output; B the next one's B output
/// (the last virtual stage: its own F); W its own B (same stage, same micro-batch).
bool input_of(const PipeOp& op, int vstage, int vstages, PassRef* input);

/// Throws std::invalid_argument naming the rule when the schedule cannot run `micro_batches`:
/// pp, vpp or the micro-batch count below 1, vpp > 1 without the interleaved schedule (zb-h1:
/// one chunk per stage), or an
/// interleaved micro-batch count that is not a multiple of pp (Megatron's rule).
void check_schedule(const ParallelSpec& p, int micro_batches);

/// Emits every stage's passes (stage_schedule order) in one global order in which each pass
/// comes after its input (input_of). `emit(stage, op, deps)` adds the pass, waiting for `deps`
/// (the tasks its input produced), and returns the tasks its own output is. Throws
/// std::invalid_argument for a schedule check_schedule() refuses, std::logic_error when the
/// orders deadlock.
using EmitPass = std::function<std::vector<sim::TaskId>(int stage, const PipeOp& op, std::vector<sim::TaskId> deps)>;
void emit_pipeline(const ParallelSpec& p, int micro_batches, const EmitPass& emit);

/// Layers of each virtual stage, pp·vpp entries in pipeline order: p.pp_layers when given,
/// else an even split (the remainder going to the last stages, which also lack the embedding).
std::vector<int> virtual_stage_layers(int layers, const ParallelSpec& p);

/// The share of the model's blocks whose backward runs StepCosts::layer_recompute first: all
/// of them unless recompute is full with training.recompute_layers set, then the first
/// recompute_layers blocks of each model chunk over all blocks.
double recompute_share(int layers, const TrainingSpec& t, const ParallelSpec& p);

/// A split of `layers` over `vstages` virtual stages (pipeline order) for when they do not
/// divide evenly. Megatron's account_for_embedding/loss_in_pipeline_split when that makes it
/// even with at least two layers per stage (the embedding and the loss each take one layer's
/// place, so the first and last virtual stages carry one layer fewer: 126 layers over 16 stages
/// is [7, 8 x 14, 7], the Llama 3 405B layout); else as balanced as possible, the extra layers
/// on the middle stages (nearest the centre first), then the first, then the last stage (which
/// also computes the loss). Empty when vstages > layers.
struct UnevenSplit {
  std::vector<int> layers;
  bool megatron = false;      ///< the account_for_embedding/loss rule applied
  bool last_lightened = false;  ///< the last stages carry fewer layers for the MTP modules
};
/// `last_extra`: layer-equivalents the last virtual stage runs besides its layers (MTP modules).
UnevenSplit uneven_stage_layers(int layers, int vstages, int last_extra = 0);
/// The split of the V schedules (dualpipev, zbv) in virtual-stage order (2·pp entries): rank 0 holds
/// the first and the last virtual stage, so it also runs the embedding and the loss (one layer's
/// place each, as Megatron's split counts them) and the MTP modules. Rank 0 takes the most layers
/// that keep the busiest rank's load least (it may keep none in its last chunk, which then runs only
/// the loss and the MTP modules: Megatron's pipeline layout allows such a stage), the other ranks
/// at least one per chunk with the remainder on the middle ranks, and each rank's layers are
/// halved between its chunks (the extra one to chunk 0). Empty when pp < 2 or layers < 2·(pp − 1).
UnevenSplit v_stage_layers(int layers, int pp, int last_extra = 0);
/// Layer-equivalents of a model's MTP modules on the last stage: each runs one Transformer block
/// and the shared LM head again (DeepSeek-V3 §2.2), and Megatron's account_for_loss counts the
/// head as one layer, so 2 per module.
inline int mtp_layer_equivalents(int mtp_layers) { return 2 * mtp_layers; }
/// Whether the loader splits the layers itself: pp·vpp does not divide them, or MTP modules
/// weigh down the last stage.
inline bool automatic_split(int layers, int vstages, int last_extra) {
  return vstages > 1 && (layers % vstages != 0 || last_extra > 0);
}

/// What an explicit p.pp_layers is, for the report: "" when empty; which rule of
/// uneven_stage_layers it follows when pp·vpp does not divide the layers and it is that split
/// (the loader gives it when pp_layers is not set); else "as given".
std::string describe_split(int layers, const ParallelSpec& p, int last_extra = 0);

/// The order of passes on pipeline stage `stage` (Megatron-LM schedules.py):
///   gpipe: every forward, then every backward;
///   1f1b: pp−stage−1 warm-up forwards, then one forward/one backward, then the cool-down;
///   interleaved: warm-up (pp−stage−1)·2 + (vpp−1)·pp chunk-forwards, micro-batches taken in
///   groups of pp per chunk;
///   zb-h1 (Qi et al., arXiv 2401.10241 §2.1): 1F1B with split B and W passes, stage i's W
///   passes deferred by i micro-batches into the cool-down.
std::vector<PipeOp> stage_schedule(const ParallelSpec& p, int stage, int micro_batches);

/// zb-h1 (one chunk per stage): how many W passes stage `stage` runs after its last B in
/// stage_schedule()'s order (the step lower bound's critical path leaves them out).
int weight_passes_after_last_backward(int pp, int stage, int micro_batches);

/// Peak over the schedule of the layer-micro-batches whose forward ran and backward has not:
/// how many blocks' activations stage `stage` holds at once.
int peak_layers_in_flight(const ParallelSpec& p, int stage, int micro_batches,
                          const std::vector<int>& vstage_layers);

/// Peak over the schedule of the activation bytes stage `stage` holds when each block keeps
/// `saved` bytes from its forward to its backward (B) and, where the schedule splits the
/// backward, `kept_for_w` of them (the wgrad GEMMs' inputs and output gradients) from B to W.
/// Without a split it is peak_layers_in_flight() · saved.
double peak_held_activations(const ParallelSpec& p, int stage, int micro_batches, const std::vector<int>& vstage_layers,
                             double saved, double kept_for_w);

}  // namespace clustersim::models
