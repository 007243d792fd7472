#include "models/placement.hpp"

#include <algorithm>

namespace clustersim::models {
namespace {

// Counts the members of rank 0's group that fall in node 0, enumerating the varying
// coordinates (`inner` fastest) until the rank index leaves the node.
int members_in_first_node(long ranks_in_group, long stride_inner, long count_inner, long stride_outer,
                          int gpus_per_node) {
  int n = 0;
  for (long i = 0; i < ranks_in_group; ++i) {
    const long rank = (i % count_inner) * stride_inner + (i / count_inner) * stride_outer;
    if (rank < gpus_per_node) ++n;
    else if (i % count_inner == 0) break;  // the outer coordinate left the node for good
  }
  return std::max(1, n);
}

}  // namespace

Placement make_placement(const ParallelSpec& p, int gpus_per_node) {
  Placement out;
  const long tp = p.tp, cp = p.cp, pp = p.pp, dp = p.dp;
  out.tp = {p.tp, members_in_first_node(tp, 1, tp, 0, gpus_per_node)};
  out.cp = {p.cp, members_in_first_node(cp, tp, cp, 0, gpus_per_node)};
  // DP × CP group: cp coordinate fastest (stride tp), then dp (stride tp·cp·pp).
  out.dp = {p.dp * p.cp, members_in_first_node(cp * dp, tp, cp, tp * cp * pp, gpus_per_node)};
  out.stage_stride = tp * cp;
  out.gpus_per_node = gpus_per_node;
  return out;
}

}  // namespace clustersim::models
