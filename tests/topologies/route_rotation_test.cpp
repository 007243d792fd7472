#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/topology_load.hpp"
#include "support/route_fixture.hpp"
#include "topologies/collective.hpp"
#include "topologies/topology.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::topologies;
using clustersim::testing::routes;

namespace {

// Destination sets of the shapes the collectives search: one peer in another node, ring and tree
// neighbours, a whole node, and scattered multi-group sets (a fixed linear congruential sequence).
std::vector<std::vector<int>> destination_sets(int src, int gpus, int per_node, std::uint32_t& seed) {
  std::vector<std::vector<int>> sets;
  sets.push_back({(src + per_node) % gpus});
  sets.push_back({(src + 1) % gpus, (src + gpus - per_node) % gpus});
  std::vector<int> node;
  for (int i = 0; i < per_node; ++i) node.push_back(src / per_node * per_node + i);
  sets.push_back(node);
  for (int k = 0; k < 3; ++k) {
    std::vector<int> scattered;
    for (int i = 0; i < 4; ++i) {
      seed = seed * 1664525u + 1013904223u;
      scattered.push_back(int(seed >> 8) % gpus);
    }
    sets.push_back(scattered);
  }
  return sets;
}

}  // namespace

// Routes are searched from one leaf group and rotated onto the others; they must be exactly the
// routes a search from each GPU finds, tie-breaks included, on every kind of node and fabric.
TEST_CASE("routes rotated from one leaf group equal routes searched from every GPU", "[topologies][rotation]") {
  for (const std::string name : {"dgx-h100", "dgx1-v100", "gb200-nvl72", "h100-pcie-ethernet", "mi300x"}) {
    for (const bool rail : {true, false}) {
      TopologySpec spec = clustersim::scenarios::topology_preset(name);
      spec.rail_optimized = rail;
      spec.nodes_per_leaf = 2;
      const int nodes = 8;  // four full leaf groups
      const Topology rotated(spec, nodes), searched(spec, nodes, false);
      INFO(name << (rail ? " rail-optimized" : " one leaf per group"));
      std::uint32_t seed = 12345;
      for (int src = 0; src < rotated.gpus(); ++src)
        for (const auto& dsts : destination_sets(src, rotated.gpus(), spec.gpus_per_node, seed)) {
          INFO("from GPU " << src);
          REQUIRE(routes(rotated, src, dsts) == routes(searched, src, dsts));
        }
    }
  }
}

TEST_CASE("a plan routed with rotation equals the plan routed from every GPU", "[topologies][rotation]") {
  TopologySpec spec = clustersim::scenarios::topology_preset("dgx-h100");
  spec.nodes_per_leaf = 2;
  const Topology rotated(spec, 8), searched(spec, 8, false);
  Layout l;
  l.sizes[index(GroupDim::tp)] = 4;
  l.sizes[index(GroupDim::pp)] = 2;
  l.sizes[index(GroupDim::dp)] = 8;
  for (GroupDim dim : {GroupDim::tp, GroupDim::pp, GroupDim::dp})
    for (Algorithm a : {Algorithm::ring, Algorithm::tree, Algorithm::hierarchical}) {
      const auto groups = member_groups(l, dim, {});
      const Plan p = make_plan(rotated, groups, Collective::all_reduce, a), q = make_plan(searched, groups, Collective::all_reduce, a);
      REQUIRE(p.phases.size() == q.phases.size());
      for (std::size_t i = 0; i < p.phases.size(); ++i) {
        CHECK(p.phases[i].s_per_byte == q.phases[i].s_per_byte);
        CHECK(p.phases[i].class_share == q.phases[i].class_share);
      }
    }
}

}}  // namespace CLUSTERSIM_TEST_ID
