#pragma once
// Rank → GPU placement. By default ranks are numbered with TP innermost, then CP, PP and DP
// (Megatron's default order, what torchrun + Megatron launchers produce), and global rank r
// runs on GPU r, i.e. GPU r % gpus_per_node of node r / gpus_per_node. So TP groups stay inside
// a node and DP groups cross the network. The order is configurable.
#include <array>
#include <vector>

namespace clustersim::topologies {

enum class GroupDim { tp, cp, pp, dp };
inline const char* name(GroupDim d) {
  return d == GroupDim::tp ? "tp" : d == GroupDim::cp ? "cp" : d == GroupDim::pp ? "pp" : "dp";
}
using PlacementOrder = std::array<GroupDim, 4>;  ///< innermost (fastest-varying rank) first
inline constexpr PlacementOrder kDefaultPlacement = {GroupDim::tp, GroupDim::cp, GroupDim::pp, GroupDim::dp};

struct Layout {
  int tp = 1, cp = 1, pp = 1, dp = 1;
  PlacementOrder order = kDefaultPlacement;
  int ranks() const { return tp * cp * pp * dp; }
  int size(GroupDim d) const { return d == GroupDim::tp ? tp : d == GroupDim::cp ? cp : d == GroupDim::pp ? pp : dp; }
};

/// Every communicator of one dimension (all run concurrently), each listing its GPUs in
/// group-rank order.
std::vector<std::vector<int>> groups_of(const Layout& layout, GroupDim dim);

}  // namespace clustersim::topologies
