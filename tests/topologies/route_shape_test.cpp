#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "scenarios/topology_load.hpp"
#include "support/route_fixture.hpp"
#include "topologies/collective.hpp"
#include "topologies/route_symmetry.hpp"
#include "topologies/topology.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::topologies;
using clustersim::testing::routes;

namespace {

std::uint32_t next(std::uint32_t& seed) { return (seed = seed * 1664525u + 1013904223u) >> 8; }

// Destination sets of many shapes: the expert all-to-all of a strided stage (one GPU every
// `stride`, as PP16 with Megatron's order gives), a whole node, a node's rail across the
// cluster, and random sets of 1 to 24 GPUs with repeats and sometimes the source itself.
std::vector<std::vector<int>> destination_sets(int src, int gpus, int per_node, std::uint32_t& seed) {
  std::vector<std::vector<int>> sets;
  for (int stride : {2, per_node, 2 * per_node}) {
    std::vector<int> s;
    for (int g = src % stride; g < gpus; g += stride)
      if (g != src) s.push_back(g);
    sets.push_back(s);
  }
  std::vector<int> node, rail;
  for (int i = 0; i < per_node; ++i) node.push_back(src / per_node * per_node + i);
  for (int g = src % per_node; g < gpus; g += per_node) rail.push_back(g);
  sets.push_back(node);
  sets.push_back(rail);
  for (int k = 0; k < 4; ++k) {
    std::vector<int> s;
    const int n = 1 + int(next(seed) % 24);
    for (int i = 0; i < n; ++i) s.push_back(int(next(seed) % std::uint32_t(gpus)));
    if (k == 3) s.push_back(src);
    sets.push_back(s);
  }
  return sets;
}

}  // namespace

// The canonical relabelling is a permutation of nodes inside leaf groups and of the groups,
// puts the source in node 0 of group 0, and gives searches related by such a permutation the
// same canonical search.
TEST_CASE("canonical relabelling maps searches of one shape onto one search", "[topologies][shape]") {
  const int k = 4, group_nodes = 3, groups = 4, gpus = k * group_nodes * groups;
  std::uint32_t seed = 777;
  for (int trial = 0; trial < 200; ++trial) {
    const int src = int(next(seed) % gpus);
    std::vector<int> dsts;
    for (int i = 0, n = 1 + int(next(seed) % 12); i < n; ++i) dsts.push_back(int(next(seed) % gpus));
    NodeRelabel a;
    canonical_relabel(k, group_nodes, groups, src, dsts, a);
    // A random relabelling: groups shuffled, nodes shuffled inside each group.
    std::vector<int> group_perm(groups), node_perm(std::size_t(group_nodes * groups));
    std::iota(group_perm.begin(), group_perm.end(), 0);
    for (int i = groups - 1; i > 0; --i) std::swap(group_perm[std::size_t(i)], group_perm[next(seed) % std::uint32_t(i + 1)]);
    for (int g = 0; g < groups; ++g) {
      std::vector<int> slots(group_nodes);
      std::iota(slots.begin(), slots.end(), 0);
      for (int i = group_nodes - 1; i > 0; --i) std::swap(slots[std::size_t(i)], slots[next(seed) % std::uint32_t(i + 1)]);
      for (int s = 0; s < group_nodes; ++s)
        node_perm[std::size_t(g * group_nodes + s)] = group_perm[std::size_t(g)] * group_nodes + slots[std::size_t(s)];
    }
    auto moved = [&](int gpu) { return node_perm[std::size_t(gpu / k)] * k + gpu % k; };
    std::vector<int> moved_dsts;
    for (int d : dsts) moved_dsts.push_back(moved(d));
    NodeRelabel b;
    canonical_relabel(k, group_nodes, groups, moved(src), moved_dsts, b);
    INFO("trial " << trial);
    CHECK(a.src == src % k);
    CHECK(b.src == a.src);
    CHECK(b.dsts == a.dsts);
    for (int n = 0; n < group_nodes * groups; ++n) {
      REQUIRE(a.node_from[std::size_t(a.node_to[std::size_t(n)])] == n);
      CHECK(a.group_from[std::size_t(a.node_to[std::size_t(n)] / group_nodes)] == n / group_nodes);
    }
    std::vector<int> expected;
    for (int d : dsts) expected.push_back(a.node_to[std::size_t(d / k)] * k + d % k);
    std::sort(expected.begin(), expected.end());
    expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
    CHECK(a.dsts == expected);
  }
}

// Routes found through the canonical search of their shape (nodes permuted inside leaf groups
// of four nodes, groups permuted) must be exactly the routes a search from each GPU finds,
// tie-breaks included, on every kind of node and fabric.
TEST_CASE("routes by shape equal routes searched from every GPU", "[topologies][shape]") {
  for (const std::string name : {"dgx-h100", "dgx1-v100", "gb200-nvl72", "h100-pcie-ethernet", "mi300x"}) {
    for (const bool rail : {true, false}) {
      TopologySpec spec = clustersim::scenarios::topology_preset(name);
      spec.rail_optimized = rail;
      spec.nodes_per_leaf = 4;
      const int nodes = 12;  // three full leaf groups
      const Topology shaped(spec, nodes), searched(spec, nodes, false);
      INFO(name << (rail ? " rail-optimized" : " one leaf per group"));
      std::uint32_t seed = 4242;
      const int step = spec.gpus_per_node > 8 ? 7 : 1;  // a sample of the 864 GPUs of NVL72 nodes
      for (int src = 0; src < shaped.gpus(); src += step)
        for (const auto& dsts : destination_sets(src, shaped.gpus(), spec.gpus_per_node, seed)) {
          INFO("from GPU " << src << " to " << dsts.size() << " GPUs");
          REQUIRE(routes(shaped, src, dsts) == routes(searched, src, dsts));
        }
    }
  }
}

// The expert all-to-all of the DeepSeek-V3 layout (PP16 with Megatron's order: a stage's ranks
// are every 16th GPU, EP groups half of them) routed by shape equals the plan routed from
// every GPU.
TEST_CASE("an expert all-to-all plan routed by shape equals the plan routed from every GPU", "[topologies][shape]") {
  TopologySpec spec = clustersim::scenarios::topology_preset("dgx-h800");
  spec.nodes_per_leaf = 4;
  const Topology shaped(spec, 32), searched(spec, 32, false);
  Layout l;
  l.sizes[index(GroupDim::pp)] = 16;
  l.sizes[index(GroupDim::dp)] = 16;
  l.sizes[index(GroupDim::ep)] = 8;
  l.sizes[index(GroupDim::edp)] = 2;
  for (GroupDim dim : {GroupDim::ep, GroupDim::dp}) {
    const auto groups = member_groups(l, dim, {});
    for (Collective c : {Collective::all_to_all, Collective::send_recv}) {
      const Plan p = make_plan(shaped, groups, c, Algorithm::direct), q = make_plan(searched, groups, c, Algorithm::direct);
      REQUIRE(p.phases.size() == q.phases.size());
      for (std::size_t i = 0; i < p.phases.size(); ++i) {
        CHECK(p.phases[i].s_per_byte == q.phases[i].s_per_byte);
        CHECK(p.phases[i].class_share == q.phases[i].class_share);
      }
    }
  }
}

}}  // namespace CLUSTERSIM_TEST_ID
