#pragma once
// The pass merger: consecutive kernels and TP / CP transfers whose durations are already known
// run as one task per pass (or per unit, where DP traffic is tied to units). Each unit is
// simulated once alone at kernel granularity on a graph of its own; a pass's profile is the sum
// of its units' (they run back to back). Profiles are cached for the rest of the step.
#include <map>
#include <utility>
#include <vector>

#include "models/step_attribution.hpp"
#include "models/step_graph.hpp"
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

/// A unit's kernels and transfers on stage s (for a block's backward, its recomputed forward
/// first): what the merger profiles and what the kernel-level graph runs.
void emit_unit_body(StepGraph& g, int s, const BlockProgram& prog, Recompute recompute, const PassUnit& u,
                    bool forward, std::vector<sim::TaskId>* deps);

class PassMerger {
 public:
  PassMerger(const BlockProgram& prog, Recompute recompute, const hardware::GpuSpec& gpu, TrainingSpec::FreeComm free)
      : prog_(prog), recompute_(recompute), gpu_(gpu), free_(free) {}
  /// The profile of one unit's forward or backward.
  int unit(const PassUnit& u, bool forward);
  /// The profile of virtual stage `vs`'s whole forward or backward made of `units`.
  int pass(int vs, bool forward, const std::vector<PassUnit>& units);
  const std::vector<PassProfile>& profiles() const { return profiles_; }
  double total_s(int profile) const { return profiles_[static_cast<std::size_t>(profile)].total_s; }

 private:
  const BlockProgram& prog_;
  Recompute recompute_;
  const hardware::GpuSpec& gpu_;
  TrainingSpec::FreeComm free_;
  std::vector<PassProfile> profiles_;
  std::map<std::pair<bool, int>, int> units_;   ///< (forward, program) → profile
  std::map<std::pair<bool, int>, int> passes_;  ///< (forward, virtual stage) → profile
};

}  // namespace clustersim::models
