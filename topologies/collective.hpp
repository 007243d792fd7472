#pragma once
// Analytical NCCL-style collective cost over DGX-like nodes: ring and (for all-reduce) double
// binary tree, α–β with NCCL's own latency constants (hardware.md §3.8), bandwidth from the
// slowest link class a ring crosses. nccl-tests conventions: S is the whole buffer in bytes,
// busbw = algbw · factor (factor 2(n−1)/n for all-reduce, (n−1)/n for reduce-scatter and
// all-gather).
#include <string>

#include "hardware/gpu_spec.hpp"

namespace clustersim::topologies {

enum class Collective { all_reduce, reduce_scatter, all_gather };
enum class Algorithm { ring, tree };

/// Shape of one communicator: `ranks` in total, `ranks_per_node` of them in each node
/// (nodes = ranks / ranks_per_node). Other groups of the same kind run at the same time on
/// the node's other GPUs and share its NICs (rail-optimized: each GPU uses its own NIC).
struct GroupShape {
  int ranks = 1;
  int ranks_per_node = 1;
  int nodes() const { return (ranks + ranks_per_node - 1) / ranks_per_node; }
};

struct CollectiveCost {
  double time_s = 0;
  double latency_s = 0;
  double busbw_bps = 0;     ///< bandwidth term as nccl-tests busbw
  Algorithm algorithm = Algorithm::ring;
};

/// nccl-tests bus-bandwidth factor for a collective over n ranks.
double bus_factor(Collective c, int n);

/// The bottleneck busbw for a ring over `g`: NVLink (or PCIe) inside a node, and the node's
/// NICs shared by the concurrent groups across nodes (one NCCL ring per NIC, §3.7).
double ring_busbw(const hardware::NodeSpec& node, const GroupShape& g);

/// Time of one collective over a buffer of `bytes` (nccl-tests S).
CollectiveCost collective_cost(const hardware::NodeSpec& node, Collective c, double bytes,
                               const GroupShape& g);

}  // namespace clustersim::topologies

namespace clustersim::topologies {

/// One point-to-point transfer of `bytes` between two GPUs (pipeline send/recv): over NVLink
/// when both are in one node, else over the sender's own NIC (rail-optimized, one NIC per GPU).
/// α is NCCL's base latency plus one hop of the link class (hardware.md §3.8).
CollectiveCost p2p_cost(const hardware::NodeSpec& node, double bytes, bool same_node);

}  // namespace clustersim::topologies
