#pragma once
// Rank → GPU placement. Global rank r runs on GPU r, i.e. GPU r % gpus_per_node of node
// r / gpus_per_node. By default ranks are numbered as the stacks number them: TP innermost, then
// CP, DP and PP outermost — Megatron-Core's default order tp-cp-ep-dp-pp (parallel_state.py
// initialize_model_parallel, `order`; the expert dimensions fold over tp·cp·dp, see GroupDim) and
// torchtitan's device mesh ['pp', 'dp_replicate', 'dp_shard', 'cp', 'tp'] (outermost first). So TP
// groups stay inside a node, a pipeline stage's data-parallel (and expert) ranks are adjacent,
// and the pipeline crosses the network. `network.placement` changes the order (e.g.
// [tp, cp, pp, dp], the default until 2026-12-03, which put each stage's DP and EP groups pp GPUs
// apart).
#include <array>
#include <vector>

namespace clustersim::topologies {

/// The parallel dimensions, as a table. The first kPlacedDims place ranks (their product is the
/// job); the expert dimensions ep, etp, edp fold over the tp·cp·dp ranks of each pipeline stage
/// (Megatron parallel folding, arXiv 2504.14960): a stage's ranks, numbered tp fastest, then cp,
/// then dp (Megatron's order), are renumbered etp fastest, then ep, then edp.
enum class GroupDim { tp, cp, pp, dp, ep, etp, edp };
inline constexpr std::size_t kPlacedDims = 4;
inline constexpr std::size_t kGroupDims = 7;
inline constexpr std::array<const char*, kGroupDims> kGroupDimNames = {"tp", "cp", "pp", "dp", "ep", "etp", "edp"};
inline std::size_t index(GroupDim d) { return static_cast<std::size_t>(d); }
inline const char* name(GroupDim d) { return kGroupDimNames[index(d)]; }
inline bool folded(GroupDim d) { return index(d) >= kPlacedDims; }
using PlacementOrder = std::array<GroupDim, kPlacedDims>;  ///< innermost (fastest-varying rank) first
inline constexpr PlacementOrder kDefaultPlacement = {GroupDim::tp, GroupDim::cp, GroupDim::dp, GroupDim::pp};

struct Layout {
  std::array<int, kGroupDims> sizes{1, 1, 1, 1, 1, 1, 1};  ///< by GroupDim
  PlacementOrder order = kDefaultPlacement;
  int size(GroupDim d) const { return sizes[index(d)]; }
  int ranks() const {
    int n = 1;
    for (std::size_t d = 0; d < kPlacedDims; ++d) n *= sizes[d];
    return n;
  }
  /// Ranks between one member of a placed `dim` group and the next (folded dims: see groups_of).
  int stride(GroupDim dim) const {
    int stride = 1;
    for (GroupDim inner : order) {
      if (inner == dim) break;
      stride *= size(inner);
    }
    return stride;
  }
  bool operator==(const Layout&) const = default;
};

/// Every communicator of one dimension (all run concurrently), each listing its GPUs in
/// group-rank order.
std::vector<std::vector<int>> groups_of(const Layout& layout, GroupDim dim);

}  // namespace clustersim::topologies
