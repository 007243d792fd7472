// Plans are cached under plan_layout(): it must keep every communicator of the dimension
// exactly as the real layout has it (groups_of), or a cached plan would route other groups.
#include <catch2/catch.hpp>

#include <algorithm>

#include "topologies/network.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

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
  // With PP inside DP ([tp, cp, pp, dp]): DP stride 16 and size 4 either way, (tp 8, pp 2) and (tp 8, cp 2).
  constexpr PlacementOrder pp_inner = {GroupDim::tp, GroupDim::cp, GroupDim::pp, GroupDim::dp};
  CHECK(plan_layout(Layout{{8, 1, 2, 4, 1, 1, 1}, pp_inner}, GroupDim::dp) == plan_layout(Layout{{8, 2, 1, 4, 1, 1, 1}, pp_inner}, GroupDim::dp));
  CHECK(plan_layout(Layout{{8, 1, 2, 4, 1, 1, 1}, pp_inner}, GroupDim::tp) == plan_layout(Layout{{8, 2, 1, 4, 1, 1, 1}, pp_inner}, GroupDim::tp));
  // DP stride 8 vs 16: different groups, different keys.
  CHECK_FALSE(plan_layout(Layout{{8, 1, 1, 8, 1, 1, 1}, pp_inner}, GroupDim::dp) == plan_layout(Layout{{8, 1, 2, 4, 1, 1, 1}, pp_inner}, GroupDim::dp));
  CHECK_FALSE(plan_layout(Layout{{8, 1, 2, 4, 1, 1, 1}, pp_inner}, GroupDim::pp) == plan_layout(Layout{{8, 2, 2, 2, 1, 1, 1}, pp_inner}, GroupDim::pp));
}

// Networks borrow built topologies from a process-wide pool and hand them back (network.cpp),
// so a later Network routes on a graph whose route cache earlier ones warmed. Its plans must be
// exactly those of a freshly built graph.
TEST_CASE("a Network on a reused topology costs collectives as on a fresh graph", "[topologies]") {
  TopologySpec spec;
  spec.gpus_per_node = 8;
  spec.nvlink_bandwidth = clustersim::units::BytesPerSecond(400e9);
  spec.nvlink_efficiency = 0.75;
  spec.pcie_bandwidth = clustersim::units::BytesPerSecond(60e9);
  spec.nics_per_node = 8;
  spec.nic_bandwidth = clustersim::units::BytesPerSecond(50e9);
  spec.nic_efficiency = 0.9;
  const int nodes = 4;
  const Layout layout{{8, 1, 2, 2, 1, 1, 1}};
  const Topology fresh(spec, nodes);
  int checked = 0;
  for (int round = 0; round < 3; ++round) {
    PlanCache cache;  // empty: every plan below is routed, on a topology earlier rounds handed back
    const Network net(spec, nodes, layout, AlgorithmChoice::ring, &cache);
    for (GroupDim dim : {GroupDim::dp, GroupDim::tp, GroupDim::pp})
      for (Collective c : {Collective::all_reduce, Collective::reduce_scatter, Collective::all_gather}) {
        const CollectiveTime got = net.cost(c, dim, clustersim::units::Bytes(1e8));
        const CollectiveTime want =
            time_of(make_plan(fresh, member_groups(layout, dim, {}), c, Algorithm::ring), clustersim::units::Bytes(1e8));
        CHECK(got.time.si() == want.time.si());
        REQUIRE(got.phases.size() == want.phases.size());
        for (std::size_t k = 0; k < got.phases.size(); ++k) CHECK(got.phases[k].demand == want.phases[k].demand);
        ++checked;
      }
  }
  CHECK(checked == 27);
}

}}  // namespace CLUSTERSIM_TEST_ID
