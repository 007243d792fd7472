// Full-mesh nodes (AMD MI300X xGMI: a direct link between every pair of GPUs, no switch)
// against the measured RCCL figures, and against a switched node of the same per-GPU rate.
#include <catch2/catch.hpp>

#include "scenarios/topology_load.hpp"
#include "topologies/network.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

namespace units = clustersim::units;
using namespace clustersim::topologies;

namespace {

double busbw(const TopologySpec& spec, int ranks, Collective c, double bytes) {
  Layout l;
  l.sizes[index(GroupDim::dp)] = ranks;
  const Network net(spec, 1, l);
  return bytes / net.cost(c, GroupDim::dp, units::Bytes(bytes)).time.si() * bus_factor(c, ranks);
}

}  // namespace

TEST_CASE("mi300x all-reduce busbw matches RCCL's measured figures for 8 and 2 GPUs", "[topologies][reference]") {
  const TopologySpec mi = clustersim::scenarios::topology_preset("mi300x");
  REQUIRE(mi.node_kind == NodeKind::full_mesh);
  // hardware.md §3.6 [stas-net]: 8 x MI300X RCCL all-reduce busbw 312.9 GB/s @ 4 GiB; 2 GPUs 47.7.
  // The preset's efficiency (0.70) comes from the 8-GPU row; the 2-GPU row is out of sample.
  const double bytes = 4.0 * (1ull << 30);
  CHECK(busbw(mi, 8, Collective::all_reduce, bytes) == Approx(312.9e9).epsilon(0.05));
  CHECK(busbw(mi, 2, Collective::all_reduce, bytes) == Approx(47.7e9).epsilon(0.10));
}

TEST_CASE("in a full mesh a GPU pair gets one link, behind a switch the GPU whole rate", "[topologies]") {
  TopologySpec mesh = clustersim::scenarios::topology_preset("mi300x");
  TopologySpec sw = mesh;
  sw.node_kind = NodeKind::nvswitch;
  const double bytes = 1e9;
  // send/recv between two GPUs: bus bandwidth = the path's rate.
  const double pair_mesh = busbw(mesh, 2, Collective::send_recv, bytes);
  const double pair_switch = busbw(sw, 2, Collective::send_recv, bytes);
  CHECK(pair_mesh == Approx(448e9 / 7 * 0.70).epsilon(0.05));
  CHECK(pair_switch == Approx(448e9 * 0.70).epsilon(0.05));
  // With all 8 GPUs taking part both reach the whole per-GPU rate.
  CHECK(busbw(mesh, 8, Collective::all_reduce, bytes) == Approx(busbw(sw, 8, Collective::all_reduce, bytes)).epsilon(0.05));
  // No switch, so no NVLink SHARP: a full-mesh node with an nvls_efficiency is refused.
  mesh.nvls_efficiency = 0.5;
  CHECK_THROWS_WITH(Topology::validate(mesh, 1), Catch::Contains("nvls_efficiency"));
}

}}  // namespace CLUSTERSIM_TEST_ID
