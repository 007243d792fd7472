#include "topologies/collective.hpp"

#include <algorithm>
#include <cmath>

namespace clustersim::topologies {

double bus_factor(Collective c, int n) {
  if (n <= 1) return 0.0;
  const double k = double(n - 1) / n;
  return c == Collective::all_reduce ? 2 * k : k;
}

double ring_busbw(const hardware::NodeSpec& node, const GroupShape& g) {
  const double intra = node.nvlink_bps > 0 ? node.nvlink_bps * node.nvlink_efficiency
                                           : node.pcie_bps * node.pcie_efficiency;
  if (g.nodes() <= 1) return intra;
  // The node's NICs are split over the concurrent groups: a group with r ranks per node gets
  // r/gpus_per_node of them, and its rings cross the network once per node boundary.
  const double nic_share = node.nic_bps * node.nic_efficiency * node.nics_per_node *
                           double(g.ranks_per_node) / node.gpus_per_node;
  return g.ranks_per_node > 1 ? std::min(intra, nic_share) : nic_share;
}

CollectiveCost collective_cost(const hardware::NodeSpec& node, Collective c, double bytes,
                               const GroupShape& g) {
  CollectiveCost out;
  const int n = g.ranks;
  if (n <= 1 || bytes <= 0) return out;
  const int nodes = g.nodes();
  const double busbw = ring_busbw(node, g);
  const double net_hop = nodes > 1 ? node.net_hop_latency_s : 0.0;
  const double intra_hop = node.nvlink_bps > 0 ? node.nvlink_hop_latency_s : node.nvlink_hop_latency_s * 1.7;
  // Ring (NCCL tuning.cc): base + (nsteps − nInterSteps)·intra + nInterSteps·inter.
  const int passes = c == Collective::all_reduce ? 2 : 1;
  const double steps = passes * double(n - 1);
  const double inter_steps = passes * double(nodes - 1);
  const double ring_lat = node.collective_base_latency_s + (steps - inter_steps) * intra_hop +
                          inter_steps * net_hop;
  const double bw_s = bytes * bus_factor(c, n) / busbw;
  out = {ring_lat + bw_s, ring_lat, busbw, Algorithm::ring};
  if (c == Collective::all_reduce && nodes > 1) {
    // Double binary tree: latency grows with log2(nodes); same NIC-bound bandwidth.
    const double tree_lat = node.collective_base_latency_s +
                            2 * ((g.ranks_per_node - 1) * intra_hop + std::log2(double(nodes)) * net_hop);
    if (tree_lat + bw_s < out.time_s) out = {tree_lat + bw_s, tree_lat, busbw, Algorithm::tree};
  }
  return out;
}

}  // namespace clustersim::topologies

namespace clustersim::topologies {

CollectiveCost p2p_cost(const hardware::NodeSpec& node, double bytes, bool same_node) {
  CollectiveCost out;
  if (bytes <= 0) return out;
  double bw = node.nic_bps * node.nic_efficiency;
  double hop = node.net_hop_latency_s;
  if (same_node) {
    bw = node.nvlink_bps > 0 ? node.nvlink_bps * node.nvlink_efficiency : node.pcie_bps * node.pcie_efficiency;
    hop = node.nvlink_hop_latency_s;
  }
  out.latency_s = node.collective_base_latency_s + hop;
  out.busbw_bps = bw;
  out.time_s = out.latency_s + bytes / bw;
  return out;
}

}  // namespace clustersim::topologies
