#pragma once
// Rank → GPU placement. Ranks are numbered with TP innermost, then CP, PP and DP (Megatron's
// default order, what torchrun + Megatron launchers produce), and global rank r runs on GPU r,
// i.e. GPU r % gpus_per_node of node r / gpus_per_node. So TP groups stay inside a node and
// DP groups cross the network.
#include <vector>

namespace clustersim::topologies {

struct Layout {
  int tp = 1, cp = 1, pp = 1, dp = 1;
  int ranks() const { return tp * cp * pp * dp; }
};

enum class GroupDim { tp, cp, pp, dp };

/// Every communicator of one dimension (all run concurrently), each listing its GPUs in
/// group-rank order.
std::vector<std::vector<int>> groups_of(const Layout& layout, GroupDim dim);

}  // namespace clustersim::topologies
