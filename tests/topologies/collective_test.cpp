#include <catch2/catch.hpp>

#include "topologies/collective.hpp"

using namespace clustersim;
using topologies::Collective;

namespace {
hardware::NodeSpec dgx_h100() {
  hardware::NodeSpec n;
  n.gpus_per_node = 8;
  n.nvlink_bps = 450e9;
  n.nvlink_efficiency = 0.82;
  n.nvlink_hop_latency_s = 3.4e-6;
  n.nics_per_node = 8;
  n.nic_bps = 50e9;
  n.nic_efficiency = 0.94;
  n.net_hop_latency_s = 14e-6;
  n.collective_base_latency_s = 8.4e-6;
  return n;
}
}  // namespace

TEST_CASE("ring all-reduce inside a node takes 2(n-1)/n·S/B plus ring latency", "[topologies]") {
  const auto node = dgx_h100();
  const double S = 1e9, B = 450e9 * 0.82;
  const auto c = topologies::collective_cost(node, Collective::all_reduce, S, {8, 8});
  const double latency = 8.4e-6 + 14 * 3.4e-6;  // base + 2(n-1) NVLink hops
  REQUIRE(c.time_s == Approx(2.0 * 7 / 8 * S / B + latency));
  REQUIRE(c.busbw_bps == Approx(B));
}

TEST_CASE("across nodes a full-node ring is bounded by the node's NICs", "[topologies]") {
  const auto node = dgx_h100();
  // 8 ranks per node: one ring per NIC, busbw = 8 × 47 GB/s (hardware.md §3.7).
  REQUIRE(topologies::ring_busbw(node, {128, 8}) == Approx(std::min(369e9, 8 * 47e9)));
  // 1 rank per node (the other GPUs run their own groups): one NIC's worth.
  REQUIRE(topologies::ring_busbw(node, {16, 1}) == Approx(47e9));
}

TEST_CASE("reduce-scatter moves half the bytes of an all-reduce", "[topologies]") {
  const auto node = dgx_h100();
  const auto ar = topologies::collective_cost(node, Collective::all_reduce, 4e9, {64, 8});
  const auto rs = topologies::collective_cost(node, Collective::reduce_scatter, 4e9, {64, 8});
  REQUIRE((rs.time_s - rs.latency_s) == Approx((ar.time_s - ar.latency_s) / 2));
}
