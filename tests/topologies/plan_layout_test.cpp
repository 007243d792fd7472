// Plans are cached under plan_layout(): it must keep every communicator of the dimension
// exactly as the real layout has it (groups_of), or a cached plan would route other groups.
#include <catch2/catch.hpp>

#include <algorithm>

#include "topologies/network.hpp"

using namespace clustersim::topologies;

TEST_CASE("plan_layout keeps each dimension's communicators", "[topologies]") {
  const std::vector<PlacementOrder> orders = {kDefaultPlacement,
                                              {GroupDim::dp, GroupDim::tp, GroupDim::cp, GroupDim::pp},
                                              {GroupDim::pp, GroupDim::dp, GroupDim::tp, GroupDim::cp}};
  int checked = 0;
  for (const PlacementOrder& order : orders)
    for (int tp : {1, 2, 8})
      for (int cp : {1, 2})
        for (int pp : {1, 4, 3})
          for (int dp : {1, 2, 6}) {
            Layout l;
            l.sizes = {tp, cp, pp, dp, 1, 1, 1};
            l.order = order;
            for (std::size_t d = 0; d < kPlacedDims; ++d) {  // folded dims are cached under the whole layout
              const auto dim = static_cast<GroupDim>(d);
              const Layout canon = plan_layout(l, dim);
              CHECK(canon.ranks() == l.ranks());
              CHECK(groups_of(canon, dim) == groups_of(l, dim));
              ++checked;
            }
          }
  CHECK(checked == 3 * 3 * 2 * 3 * 3 * 4);
}

TEST_CASE("layouts with the same DP groups share one plan layout, others do not", "[topologies]") {
  // DP stride 16 and size 4 either way: (tp 8, pp 2) and (tp 8, cp 2).
  CHECK(plan_layout(Layout{{8, 1, 2, 4, 1, 1, 1}}, GroupDim::dp) == plan_layout(Layout{{8, 2, 1, 4, 1, 1, 1}}, GroupDim::dp));
  CHECK(plan_layout(Layout{{8, 1, 2, 4, 1, 1, 1}}, GroupDim::tp) == plan_layout(Layout{{8, 2, 1, 4, 1, 1, 1}}, GroupDim::tp));
  // DP stride 8 vs 16: different groups, different keys.
  CHECK_FALSE(plan_layout(Layout{{8, 1, 1, 8, 1, 1, 1}}, GroupDim::dp) == plan_layout(Layout{{8, 1, 2, 4, 1, 1, 1}}, GroupDim::dp));
  CHECK_FALSE(plan_layout(Layout{{8, 1, 2, 4, 1, 1, 1}}, GroupDim::pp) == plan_layout(Layout{{8, 2, 2, 2, 1, 1, 1}}, GroupDim::pp));
}
