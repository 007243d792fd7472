#pragma once
// Where a rank's communicators live, for Megatron's rank order (TP innermost, then CP, then
// PP, then DP) over nodes of `gpus_per_node` consecutive ranks. Shapes are those of the
// groups containing rank 0; by symmetry every other group of the same kind looks alike.
#include "models/training_spec.hpp"
#include "topologies/collective.hpp"

namespace clustersim::models {

struct Placement {
  topologies::GroupShape tp;
  topologies::GroupShape cp;
  topologies::GroupShape dp;     ///< gradient / ZeRO sharding group: DP × CP ranks (Megatron)
  long stage_stride = 1;  ///< ranks between one pipeline stage and the next (tp·cp)
  int gpus_per_node = 8;
  /// Whether the representative ranks of pipeline stages a and b sit in one node.
  bool stages_share_node(int a, int b) const {
    return (stage_stride * a) / gpus_per_node == (stage_stride * b) / gpus_per_node;
  }
};

Placement make_placement(const ParallelSpec& p, int gpus_per_node);

}  // namespace clustersim::models
