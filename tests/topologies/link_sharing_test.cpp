#include <catch2/catch.hpp>

#include "sim/runner.hpp"
#include "topologies/network.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using namespace clustersim::topologies;

namespace {

// Rail-optimized fat tree with 2 nodes per leaf group.
TopologySpec small_fabric(double oversubscription) {
  TopologySpec t;
  t.gpus_per_node = 8;
  t.nvlink_bandwidth = units::BytesPerSecond(450e9);
  t.pcie_bandwidth = units::BytesPerSecond(63e9);
  t.nics_per_node = 8;
  t.nic_bandwidth = units::BytesPerSecond(50e9);
  t.nic_efficiency = 1.0;
  t.nodes_per_leaf = 2;
  t.oversubscription = oversubscription;
  return t;
}

double transfer_s(const CollectiveTime& t) {
  double s = 0;
  for (const auto& p : t.phases) s += p.transfer.si();
  return s;
}

}  // namespace

TEST_CASE("placement puts TP innermost, then CP, DP and PP (Megatron-Core's tp-cp-ep-dp-pp)", "[topologies]") {
  const Layout l{2, 1, 2, 2};
  CHECK(groups_of(l, GroupDim::tp) == std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  // A pipeline stage's 4 ranks are consecutive GPUs; the pipeline is the outermost dimension.
  CHECK(groups_of(l, GroupDim::dp) == std::vector<std::vector<int>>{{0, 2}, {1, 3}, {4, 6}, {5, 7}});
  CHECK(groups_of(l, GroupDim::pp) == std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  Layout dp_first = l;
  dp_first.order = {GroupDim::dp, GroupDim::tp, GroupDim::cp, GroupDim::pp};
  CHECK(groups_of(dp_first, GroupDim::dp) == std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  CHECK(groups_of(dp_first, GroupDim::tp) == std::vector<std::vector<int>>{{0, 2}, {1, 3}, {4, 6}, {5, 7}});
}

TEST_CASE("placing DP inside the node keeps its traffic off the network", "[topologies]") {
  // TP 8 × DP 2 on 2 nodes: by default each DP pair spans the nodes; DP innermost keeps it local.
  Layout across{8, 1, 1, 2};
  Layout inside = across;
  inside.order = {GroupDim::dp, GroupDim::tp, GroupDim::cp, GroupDim::pp};
  const double t_across = Network(small_fabric(1), 2, across).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(1e9)).time.si();
  const double t_inside = Network(small_fabric(1), 2, inside).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(1e9)).time.si();
  CHECK(t_inside < 0.5 * t_across);
}

TEST_CASE("an oversubscription of 2 halves the bandwidth of cross-leaf DP traffic", "[topologies][sharing]") {
  // 4 nodes, 2 per leaf. With PP inside DP ([tp, cp, pp, dp]) TP 8 × PP 2 fills a leaf, so every
  // DP pair spans the two leaves and all 16 DP all-reduces of a leaf go up its uplinks at once.
  Layout cross{8, 1, 2, 2};
  cross.order = {GroupDim::tp, GroupDim::cp, GroupDim::pp, GroupDim::dp};
  const double bytes = 1e9;
  const double full = transfer_s(Network(small_fabric(1), 4, cross).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(bytes)));
  const double half = transfer_s(Network(small_fabric(2), 4, cross).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(bytes)));
  CHECK(half / full == Approx(2.0).epsilon(0.01));
  // DP pairs inside one leaf (TP 8 × DP 2 on 2 nodes) never touch the uplinks.
  const Layout local{8, 1, 1, 2};
  const double in_leaf_1 = transfer_s(Network(small_fabric(1), 2, local).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(bytes)));
  const double in_leaf_2 = transfer_s(Network(small_fabric(2), 2, local).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(bytes)));
  CHECK(in_leaf_2 == Approx(in_leaf_1).epsilon(1e-12));
}

TEST_CASE("concurrent DP and PP transfers share the NIC links in the event simulation", "[topologies][sharing]") {
  // 4 nodes: TP 8 inside a node, PP pairs node 0↔1, DP pairs node 0↔2; both cross the NICs.
  const Network net(small_fabric(1), 4, Layout{8, 1, 2, 2});
  const auto dp = net.cost(Collective::all_reduce, GroupDim::dp, units::Bytes(2e9));
  const auto pp = net.cost(Collective::send_recv, GroupDim::pp, units::Bytes(2e9));
  constexpr int kBase = 0;
  auto run = [&](bool with_dp, bool with_pp) {
    sim::TaskGraph g;
    sim::TaskId d = -1, p = -1;
    if (with_dp) d = append_collective(g, dp, 0, {}, kBase);
    if (with_pp) p = append_collective(g, pp, 1, {}, kBase);
    const auto r = sim::run_task_graph(g);
    return std::make_pair(d >= 0 ? r.timing[std::size_t(d)].end.seconds() : 0.0,
                          p >= 0 ? r.timing[std::size_t(p)].end.seconds() : 0.0);
  };
  const double dp_alone = run(true, false).first;
  const double pp_alone = run(false, true).second;
  const auto [dp_shared, pp_shared] = run(true, true);
  CHECK(dp_alone == Approx(dp.time.si()).epsilon(1e-9));
  CHECK(dp_shared > 1.3 * dp_alone);
  CHECK(pp_shared > 1.3 * pp_alone);
  // Work-conserving: sharing never takes longer than running them one after the other.
  CHECK(std::max(dp_shared, pp_shared) <= (dp_alone + pp_alone) * (1 + 1e-9));
}

TEST_CASE("a broken topology spec is refused with the reason", "[topologies]") {
  TopologySpec t = small_fabric(1);
  t.nic_bandwidth = units::BytesPerSecond(0);
  CHECK_THROWS_WITH(Topology(t, 2), Catch::Contains("nic_bandwidth"));
  t = small_fabric(1);
  t.nics_per_node = 9;
  CHECK_THROWS_WITH(Topology(t, 2), Catch::Contains("nics_per_node"));
  t = small_fabric(1);
  t.nvlink_bandwidth = units::BytesPerSecond(0);
  CHECK_THROWS_WITH(Topology(t, 2), Catch::Contains("nvlink_bandwidth"));
}

TEST_CASE("plans shared between networks never mix up fabrics", "[topologies]") {
  const Layout dp{1, 1, 1, 32};
  const double bytes = 1e9;
  const double base = Network(small_fabric(1), 4, dp).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(bytes)).time.si();
  // The same inputs again (now served from the process-wide cache) give the same answer...
  CHECK(Network(small_fabric(1), 4, dp).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(bytes)).time.si() == base);
  // ...and any fabric property that changes routing or bandwidth gives its own plan.
  TopologySpec slower_nic = small_fabric(1);
  slower_nic.nic_bandwidth = units::BytesPerSecond(25e9);
  CHECK(Network(slower_nic, 4, dp).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(bytes)).time.si() > 1.5 * base);
  TopologySpec slower_nvlink = small_fabric(1);
  slower_nvlink.nvlink_bandwidth = units::BytesPerSecond(225e9);
  const Layout one_node{1, 1, 1, 8};
  CHECK(Network(slower_nvlink, 1, one_node).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(bytes)).time.si() >
        1.5 * Network(small_fabric(1), 1, one_node).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(bytes)).time.si());
}

}}  // namespace CLUSTERSIM_TEST_ID
