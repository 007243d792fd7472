#pragma once
// The pass merger: consecutive kernels and TP / CP transfers whose durations are already known
// run as one task per pass (or per unit, where DP traffic is tied to units). Each unit is
// simulated once alone at kernel granularity on a graph of its own; a pass's profile is the sum
// of its units' (they run back to back). Profiles are cached for the rest of the step.
#include <utility>
#include <vector>

#include "models/pipeline.hpp"
#include "models/detail/step_attribution.hpp"
#include "models/detail/step_graph.hpp"
#include "models/step_program.hpp"

namespace clustersim::models {

/// Which unit program: a block kind (≥ 0), the embedding or the LM head.
inline constexpr int kEmbeddingUnit = -1;
inline constexpr int kHeadUnit = -2;

/// One unit of a pass, in execution order.
struct PassUnit {
  int program = 0;  ///< block kind, kEmbeddingUnit or kHeadUnit
  int which = 0;    ///< for unit_index(): block index in the chunk, −1 head, layers: embedding
  int label = 0;    ///< trace label: global block index; −1 embedding, −2 LM head
};

/// What a block's backward reruns first: its whole forward (Recompute::full, for the first
/// `layers` blocks of each model chunk; −1: all) or the selective part (BlockProgram).
struct RecomputeRule {
  Recompute mode = Recompute::none;
  int layers = -1;
  explicit RecomputeRule(const TrainingSpec& t) : mode(t.recompute), layers(t.recompute_layers) {}
  /// Whether unit `u` (a block at position u.which of its chunk) reruns its whole forward.
  bool reruns_forward(const PassUnit& u) const {
    return u.program >= 0 && recomputes_block(mode, layers, u.which);
  }
};

/// A unit's kernels and transfers on stage s for a pass of `kind` (for a block's backward, its
/// recomputed forward first; a weight_grad pass runs the unit's W items): what the merger
/// profiles and what the kernel-level graph runs.
void emit_unit_body(StepGraph& g, int s, const BlockProgram& prog, const RecomputeRule& recompute, const PassUnit& u,
                    PassKind kind, std::vector<sim::TaskId>* deps);
/// The task kind of a pass's compute.
inline TaskKind task_kind(PassKind k) {
  return k == PassKind::forward ? TaskKind::forward : k == PassKind::backward ? TaskKind::backward : TaskKind::weight_grad;
}

class PassMerger {
 public:
  PassMerger(const BlockProgram& prog, const TrainingSpec& t, const hardware::GpuSpec& gpu)
      : prog_(prog), recompute_(t), gpu_(gpu), t_(t) {}
  /// The profile of one unit's forward, backward or weight_grad pass; `alone`: in a pass without
  /// a partner (BlockProgram::unpaired).
  int unit(const PassUnit& u, PassKind kind, bool alone = false);
  /// The profile of virtual stage `vs`'s whole pass of `kind` made of `units`.
  int pass(int vs, PassKind kind, const std::vector<PassUnit>& units, bool alone = false);
  const std::vector<PassProfile>& profiles() const { return profiles_; }
  double total_s(int profile) const { return profiles_[static_cast<std::size_t>(profile)].total_s; }

 private:
  const BlockProgram& prog_;
  RecomputeRule recompute_;
  const hardware::GpuSpec& gpu_;
  const TrainingSpec& t_;  ///< outlives the merger (the step's)
  std::vector<PassProfile> profiles_;
  /// The profile at `slot` of `table` (grown on demand), −1 when not profiled yet.
  static int& entry(std::vector<int>& table, std::size_t slot) {
    if (slot >= table.size()) table.resize(slot + 1, -1);
    return table[slot];
  }
  std::vector<int> units_;   ///< (((program + 2)·2 + reruns its forward)·3 + pass kind)·2 + alone → profile
  std::vector<int> passes_;  ///< (virtual stage·3 + pass kind)·2 + alone → profile
};

}  // namespace clustersim::models
