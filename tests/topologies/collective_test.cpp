#include <catch2/catch.hpp>

#include <type_traits>

#include "scenarios/topology_load.hpp"
#include "sim/runner.hpp"
#include "topologies/network.hpp"
#include "support/network_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

namespace units = clustersim::units;
using namespace clustersim::topologies;

namespace {

// The network's interface is typed (issue 14 item 5): a collective's size is Bytes, its time
// Seconds, a link's rate BytesPerSecond; a bare double or a time where bytes belong does not compile.
using CostFn = CollectiveTime (Network::*)(Collective, GroupDim, units::Bytes, const std::vector<int>&) const;
static_assert(std::is_same_v<decltype(&Network::cost), CostFn>);
static_assert(!std::is_convertible_v<double, units::Bytes>);
static_assert(!std::is_convertible_v<units::Seconds, units::Bytes>);
static_assert(std::is_same_v<decltype(CollectiveTime{}.time), units::Seconds>);
static_assert(std::is_same_v<decltype(PhaseTime{}.transfer), units::Seconds>);
static_assert(std::is_same_v<decltype(TopologySpec{}.nic_bandwidth), units::BytesPerSecond>);

TopologySpec nvswitch_node(int gpus) {
  TopologySpec t;
  t.gpus_per_node = gpus;
  t.nvlink_bandwidth = units::BytesPerSecond(400e9);
  t.nvlink_efficiency = 0.75;
  t.pcie_bandwidth = units::BytesPerSecond(60e9);
  t.pcie_efficiency = 1.0;
  t.nics_per_node = gpus;
  t.nic_bandwidth = units::BytesPerSecond(50e9);
  t.nic_efficiency = 0.9;
  return t;
}

using clustersim::testing::busbw;
using clustersim::testing::whole_cluster;

}  // namespace

TEST_CASE("bus factors follow the nccl-tests definitions", "[topologies]") {
  CHECK(bus_factor(Collective::all_reduce, 8) == Approx(2.0 * 7 / 8));
  CHECK(bus_factor(Collective::reduce_scatter, 8) == Approx(7.0 / 8));
  CHECK(bus_factor(Collective::all_gather, 16) == Approx(15.0 / 16));
  CHECK(bus_factor(Collective::all_to_all, 4) == Approx(3.0 / 4));
  CHECK(bus_factor(Collective::send_recv, 2) == Approx(1.0));
  CHECK(bus_factor(Collective::all_reduce, 1) == 0.0);
}

TEST_CASE("ring all-reduce inside one node equals the closed form", "[topologies]") {
  for (int n : {2, 4, 8}) {
    const TopologySpec spec = nvswitch_node(n);
    const Network net = whole_cluster(spec, 1, AlgorithmChoice::ring);
    const double bytes = 4e9;
    const auto t = net.cost(Collective::all_reduce, GroupDim::dp, units::Bytes(bytes));
    REQUIRE(t.protocol == Protocol::simple);
    // NCCL ring (hardware.md §3.6/§3.8): launch + base + 2(n−1)·hop + S·2(n−1)/n / B.
    const double expected = kCollectiveLaunchOverhead_s + 8.4e-6 + 2 * (n - 1) * 3.4e-6 + bytes * 2.0 * (n - 1) / n / (400e9 * 0.75);
    CHECK(t.time.si() == Approx(expected).epsilon(1e-9));
  }
}

// make_plan routes one node per pattern of node-local groups (nodes are wired alike). PCIe nodes
// with two GPUs per switch: node 0's pairs stay under their switch, node 2's cross the host (each
// switch's host link then carries two rings' edges), node 1 repeats node 0, node 3 mixes both.
// The plan of all four must be that of the busiest node; routing node 0 alone would miss it.
TEST_CASE("a plan of node-local groups keeps every node pattern's busiest link", "[topologies]") {
  TopologySpec spec = nvswitch_node(8);
  spec.node_kind = NodeKind::pcie;
  spec.gpus_per_pcie_switch = 2;
  const Topology topo(spec, 4);
  const std::vector<std::vector<int>> node0 = {{0, 1}, {2, 3}, {4, 5}, {6, 7}};
  const std::vector<std::vector<int>> node2 = {{16, 18}, {17, 19}, {20, 22}, {21, 23}};
  std::vector<std::vector<int>> groups = node0;
  for (const auto& g : node0) groups.push_back({g[0] + 8, g[1] + 8});
  groups.insert(groups.end(), node2.begin(), node2.end());
  for (const auto& g : std::vector<std::vector<int>>{{24, 25}, {26, 28}, {27, 29}, {30, 31}}) groups.push_back(g);
  const auto phase = [&](const std::vector<std::vector<int>>& gs) {
    return make_plan(topo, gs, Collective::all_gather, Algorithm::ring).phases.at(0);
  };
  const Phase all = phase(groups), busiest = phase(node2), quiet = phase(node0);
  REQUIRE(busiest.s_per_byte > 1.5 * quiet.s_per_byte);  // the patterns differ, so the test can fail
  CHECK(all.s_per_byte == busiest.s_per_byte);
  CHECK(all.class_share == busiest.class_share);
}

// The same for groups spanning nodes: components of groups sharing nodes, each inside one leaf
// group, load only their own nodes' links. Eight nodes, four under each leaf, 8-GPU all-to-all
// groups of two shapes: four GPUs in each of two nodes (two groups on nodes 0-1, two on 4-5: NIC
// traffic) or all in one node (nodes 2, 3, 6, 7: NVLink only). Per link class, the plan of all
// must be the busier of the two shapes routed alone.
TEST_CASE("a plan of multi-node groups keeps every component shape's busiest link", "[topologies]") {
  TopologySpec spec = nvswitch_node(8);
  spec.nodes_per_leaf = 4;
  const Topology topo(spec, 8);
  auto split = [](int a, int b) {  // four GPUs from a, four from b
    return std::vector<int>{a, a + 1, a + 2, a + 3, b, b + 1, b + 2, b + 3};
  };
  auto local = [](int a) { return std::vector<int>{a, a + 1, a + 2, a + 3, a + 4, a + 5, a + 6, a + 7}; };
  const std::vector<std::vector<int>> spread = {split(0, 8), split(4, 12)};
  const std::vector<std::vector<int>> inside = {local(16)};
  const std::vector<std::vector<int>> all = {split(0, 8),   split(4, 12),  local(16), local(24),
                                             split(32, 40), split(36, 44), local(48), local(56)};
  const auto phase = [&](const std::vector<std::vector<int>>& gs) {
    return make_plan(topo, gs, Collective::all_to_all, Algorithm::direct).phases.at(0);
  };
  const Phase whole = phase(all), a = phase(spread), b = phase(inside);
  REQUIRE(a.class_share[std::size_t(2 * int(LinkKind::nic))] > 0);  // the shapes load different links
  REQUIRE(b.class_share[std::size_t(2 * int(LinkKind::nic))] == 0);
  CHECK(whole.s_per_byte == std::max(a.s_per_byte, b.s_per_byte));
  for (std::size_t c = 0; c < whole.class_share.size(); ++c)
    CHECK(whole.class_share[c] * whole.s_per_byte ==
          Approx(std::max(a.class_share[c] * a.s_per_byte, b.class_share[c] * b.s_per_byte)).epsilon(1e-12));
  // A pair of nodes across the two leaves shares the uplinks: routed whole, as before.
  const Phase across = phase({split(24, 32), split(28, 36)});
  CHECK(across.class_share[std::size_t(2 * int(LinkKind::uplink))] > 0);
}

// Components spanning leaf groups: eight nodes, two under each leaf, the uplinks oversubscribed
// so that they bind. Rings over nodes 0 and 2 (leaf groups 0 and 1) and over nodes 4 and 6
// (groups 2 and 3) own their uplinks: the plan of both is the plan of one. Rings over nodes 0 and
// 2 and over nodes 1 and 3 share the uplinks of groups 0 and 1: the plan of both must load them
// twice (routing one of them, as for the first pair, would not).
TEST_CASE("a plan of components spanning leaf groups shares uplinks only where they do", "[topologies]") {
  TopologySpec spec = nvswitch_node(8);
  spec.nodes_per_leaf = 2;
  spec.oversubscription = 4;
  const Topology topo(spec, 8);
  auto ring = [](int node_a, int node_b) {  // four GPUs of each node
    return std::vector<int>{8 * node_a, 8 * node_a + 1, 8 * node_a + 2, 8 * node_a + 3,
                            8 * node_b, 8 * node_b + 1, 8 * node_b + 2, 8 * node_b + 3};
  };
  const auto phase = [&](const std::vector<std::vector<int>>& gs) {
    return make_plan(topo, gs, Collective::all_gather, Algorithm::ring).phases.at(0);
  };
  const Phase one = phase({ring(0, 2)});
  const std::size_t uplink = std::size_t(2 * int(LinkKind::uplink));
  REQUIRE(one.class_share[uplink] == 1.0);  // the uplinks bind
  const Phase apart = phase({ring(0, 2), ring(4, 6)});
  CHECK(apart.s_per_byte == one.s_per_byte);
  CHECK(apart.class_share == one.class_share);
  const Phase shared = phase({ring(0, 2), ring(1, 3)});
  CHECK(shared.s_per_byte == Approx(2 * one.s_per_byte).epsilon(1e-9));
}

TEST_CASE("ring all-reduce across nodes is bound by the slowest link class of a rail", "[topologies]") {
  const TopologySpec spec = nvswitch_node(8);
  const Network net = whole_cluster(spec, 4, AlgorithmChoice::ring);
  // One ring per NIC: busbw = min(NVLink, NICs × NIC, NICs × PCIe) for large messages.
  const double bound = std::min({400e9 * 0.75, 8 * 50e9 * 0.9, 8 * 60e9});
  CHECK(busbw(net, Collective::all_reduce, 16e9) == Approx(bound).epsilon(0.02));
}

TEST_CASE("dgx-h100 large all-reduce busbw is within 15% of the measured figures", "[topologies][reference]") {
  const TopologySpec spec = clustersim::scenarios::topology_preset("dgx-h100");
  // hardware.md §3.6: 8x H100 NVLS (NCCL's default in one node) ≈480 GB/s; §3.7: 8 x NDR per
  // node, multi-node ring busbw 370–390 GB/s.
  const std::vector<std::pair<int, double>> measured = {{1, 480e9}, {2, 380e9}, {16, 380e9}, {128, 380e9}};
  for (const auto& [nodes, ref] : measured) {
    const Network net = whole_cluster(spec, nodes);
    const double bw = busbw(net, Collective::all_reduce, 16.0 * (1ull << 30));
    INFO(nodes << " nodes: predicted " << bw / 1e9 << " GB/s vs measured " << ref / 1e9);
    CHECK(std::abs(bw / ref - 1) < 0.15);
  }
}

TEST_CASE("NVLS ramps with the GPU count as measured, and the ring stays at its NVLink share", "[topologies][reference]") {
  TopologySpec spec = clustersim::scenarios::topology_preset("dgx-h100");
  // hardware.md §3.6, H200 (NVLink 4 like H100), 8 GiB: Ring 363.3 @ 4 GPUs, NVLS 414.2 / 435.6 /
  // 460.0 @ 5 / 6 / 7 GPUs; ring with NVLS off ≈365 at every count.
  const std::vector<std::pair<int, double>> measured = {{4, 363.3e9}, {5, 414.2e9}, {6, 435.6e9}, {7, 460.0e9}};
  const double bytes = 8.0 * (1ull << 30);
  for (const auto& [gpus, ref] : measured) {
    spec.gpus_per_node = spec.nics_per_node = gpus;
    const double bw = busbw(whole_cluster(spec, 1), Collective::all_reduce, bytes);
    INFO(gpus << " GPUs: predicted " << bw / 1e9 << " GB/s vs measured " << ref / 1e9);
    CHECK(std::abs(bw / ref - 1) < 0.15);
    CHECK(whole_cluster(spec, 1).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(bytes)).algorithm ==
          (gpus >= 5 ? Algorithm::nvls : Algorithm::ring));
    CHECK(std::abs(busbw(whole_cluster(spec, 1, AlgorithmChoice::ring), Collective::all_reduce, bytes) / 365e9 - 1) < 0.15);
  }
}

TEST_CASE("dgx-a100 busbw matches the measured single-node and multi-node figures", "[topologies][reference]") {
  const TopologySpec spec = clustersim::scenarios::topology_preset("dgx-a100");
  // hardware.md §3.6: 234.89 GB/s @ 16 GiB on one node; §3.7: ≈192 GB/s across nodes.
  CHECK(std::abs(busbw(whole_cluster(spec, 1), Collective::all_reduce, 16.0 * (1ull << 30)) / 234.89e9 - 1) < 0.15);
  CHECK(std::abs(busbw(whole_cluster(spec, 8, AlgorithmChoice::ring), Collective::all_reduce, 16.0 * (1ull << 30)) / 192e9 - 1) < 0.15);
}

TEST_CASE("dgx-b200 busbw matches the measured single-node and 4-node figures", "[topologies][reference]") {
  const TopologySpec spec = clustersim::scenarios::topology_preset("dgx-b200");
  const double bytes = 16.0 * (1ull << 30);
  // hardware.md §3.6: 8x B200 NVLS 845.7 @ 16 GiB, ring 682.2 @ 8 GiB; §3.7: 4x P6-B200 (8x 400G
  // EFA each) 381.8 GB/s @ 16 GiB.
  CHECK(std::abs(busbw(whole_cluster(spec, 1), Collective::all_reduce, bytes) / 845.7e9 - 1) < 0.15);
  CHECK(std::abs(busbw(whole_cluster(spec, 1, AlgorithmChoice::ring), Collective::all_reduce, bytes / 2) / 682.2e9 - 1) < 0.15);
  CHECK(std::abs(busbw(whole_cluster(spec, 4), Collective::all_reduce, bytes) / 381.8e9 - 1) < 0.15);
}

TEST_CASE("small all-reduce latency matches the measured tens of microseconds", "[topologies][reference]") {
  const TopologySpec spec = clustersim::scenarios::topology_preset("dgx-h100");
  const auto t_us = [&](int nodes) {
    return whole_cluster(spec, nodes).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(32 * 1024)).time.si() * 1e6;
  };
  // hardware.md §3.8: 8 GPUs, 32 KiB: 43.8 µs (8x A100, nccl-tests) and ≈40 µs (8x H200):
  // 40–44 µs, ±10 %.
  CHECK(t_us(1) > 40 * 0.9);
  CHECK(t_us(1) < 44 * 1.1);
  // 2 x 8 nodes, small messages: ≈46–47 µs (H20, NVLSTree), ±20 % for the different algorithm.
  CHECK(t_us(2) > 46 * 0.8);
  CHECK(t_us(2) < 47 * 1.2);
  // More nodes add hops: never faster than two nodes (NCCL's tree latency grows as log2 nodes).
  CHECK(t_us(16) > t_us(2));
}

TEST_CASE("automatic choice uses the tree for small multi-node messages and the ring for large ones", "[topologies]") {
  const Network net = whole_cluster(clustersim::scenarios::topology_preset("dgx-h100"), 16);
  CHECK(net.cost(Collective::all_reduce, GroupDim::dp, units::Bytes(64 * 1024)).algorithm == Algorithm::tree);
  CHECK(net.cost(Collective::all_reduce, GroupDim::dp, units::Bytes(16e9)).algorithm == Algorithm::ring);
  CHECK(whole_cluster(clustersim::scenarios::topology_preset("dgx-h100"), 1)
            .cost(Collective::all_reduce, GroupDim::dp, units::Bytes(64 * 1024)).algorithm == Algorithm::ring);
}

TEST_CASE("hierarchical all-reduce beats the flat ring across few-NIC nodes for large messages", "[topologies]") {
  const TopologySpec spec = clustersim::scenarios::topology_preset("h100-pcie-ethernet");
  const double bytes = 4e9;
  const double ring = whole_cluster(spec, 2, AlgorithmChoice::ring).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(bytes)).time.si();
  const auto hier = whole_cluster(spec, 2, AlgorithmChoice::hierarchical).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(bytes));
  CHECK(hier.algorithm == Algorithm::hierarchical);
  CHECK(hier.phases.size() == 3);
  CHECK(hier.time.si() < 0.9 * ring);
  // ZeRO's reduce-scatter + all-gather gain the same way.
  const Network flat = whole_cluster(spec, 2), two_level = whole_cluster(spec, 2, AlgorithmChoice::hierarchical);
  for (Collective c : {Collective::reduce_scatter, Collective::all_gather}) {
    const auto h = two_level.cost(c, GroupDim::dp, units::Bytes(bytes));
    CHECK(h.algorithm == Algorithm::hierarchical);
    CHECK(h.phases.size() == 2);
    CHECK(h.time.si() < 0.9 * flat.cost(c, GroupDim::dp, units::Bytes(bytes)).time.si());
  }
}

TEST_CASE("reduce-scatter plus all-gather moves what one ring all-reduce moves", "[topologies]") {
  const Network net = whole_cluster(nvswitch_node(8), 4, AlgorithmChoice::ring);
  const double bytes = 8e9;
  const auto rs = net.cost(Collective::reduce_scatter, GroupDim::dp, units::Bytes(bytes));
  const auto ag = net.cost(Collective::all_gather, GroupDim::dp, units::Bytes(bytes));
  const auto ar = net.cost(Collective::all_reduce, GroupDim::dp, units::Bytes(bytes));
  const double bw_part = [](const CollectiveTime& t) { return t.phases.front().transfer.si(); }(ar);
  CHECK(rs.phases.front().transfer.si() + ag.phases.front().transfer.si() == Approx(bw_part).epsilon(1e-9));
}

TEST_CASE("all-to-all and send/recv across nodes run at the NIC rate", "[topologies]") {
  const Network net = whole_cluster(nvswitch_node(8), 4);
  const double nic = 50e9 * 0.9;
  // Send/recv: one rank to the next; the node-crossing pair goes through one NIC.
  CHECK(busbw(net, Collective::send_recv, 8e9) == Approx(nic).epsilon(0.02));
  // All-to-all: a node sends (n − k)/n of every rank's buffer out through its k NICs.
  const double n = 32, k = 8;
  const double algbw = nic / ((n - k) / n);
  CHECK(busbw(net, Collective::all_to_all, 8e9) == Approx(algbw * (n - 1) / n).epsilon(0.02));
}

TEST_CASE("collective costs are deterministic", "[topologies]") {
  const TopologySpec spec = clustersim::scenarios::topology_preset("dgx-h100");
  const double a = whole_cluster(spec, 4).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(123456789)).time.si();
  const double b = whole_cluster(spec, 4).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(123456789)).time.si();
  CHECK(a == b);
}

TEST_CASE("a session's plan cache is its own, and keys on every field of the spec", "[topologies]") {
  const TopologySpec spec = clustersim::scenarios::topology_preset("dgx-h100");
  PlanCache mine;
  Layout l;
  l.sizes[index(GroupDim::dp)] = 16;
  const Network a(spec, 2, l, AlgorithmChoice::automatic, &mine);
  const double t = a.cost(Collective::all_reduce, GroupDim::dp, units::Bytes(1e8)).time.si();
  // The same plan from another cache is routed again and equal; a spec differing in one field
  // (oversubscription) is another key.
  PlanCache other;
  CHECK(Network(spec, 2, l, AlgorithmChoice::automatic, &other).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(1e8)).time.si() == t);
  TopologySpec slower = spec;
  slower.nic_efficiency /= 2;
  CHECK(Network(slower, 2, l, AlgorithmChoice::automatic, &mine).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(1e8)).time.si() > t);
  const PlanCache::Key k1{spec, 2, l, GroupDim::dp, Collective::all_reduce, Algorithm::ring, {}};
  PlanCache::Key k2 = k1;
  CHECK(k1 == k2);
  k2.spec.oversubscription = 2;
  CHECK_FALSE(k1 == k2);
}

}}  // namespace CLUSTERSIM_TEST_ID
