#pragma once
// NCCL-style collectives over a Topology. An algorithm (ring, double binary tree, hierarchical,
// NVLS, direct) is expanded into point-to-point flows for every concurrent communicator; the flows
// are routed over the graph and each link's load (bytes per byte of the buffer) divided by its
// bandwidth gives the busiest link, hence the bandwidth term. Latency uses NCCL's own α terms
// (nccl_tuning.hpp). nccl-tests conventions: S is the whole buffer in bytes (per rank for
// all-to-all and send/recv); busbw = algbw · bus_factor (hardware.md §3.6).
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "topologies/nccl_tuning.hpp"
#include "topologies/placement.hpp"
#include "topologies/topology.hpp"

namespace clustersim::topologies {

enum class Collective { all_reduce, reduce_scatter, all_gather, all_to_all, send_recv };
enum class Algorithm { ring, tree, hierarchical, direct, nvls };
/// What the user asks for: `automatic` picks the fastest of NCCL's algorithms for each size.
enum class AlgorithmChoice { automatic, ring, tree, hierarchical, nvls };
inline constexpr std::array<const char*, 5> kAlgorithmChoiceNames = {"auto", "ring", "tree", "hierarchical", "nvls"};

const char* name(Collective c);
const char* name(Algorithm a);

/// nccl-tests bus-bandwidth factor for a collective over n ranks.
double bus_factor(Collective c, int n);

/// One phase of an algorithm, for all concurrent communicators at once, per byte of S.
struct Phase {
  std::array<double, 3> latency_s{};      ///< by Protocol
  std::array<double, 3> bw_fraction{};    ///< by Protocol: share of the Simple bandwidth
  double s_per_byte = 0;                  ///< Simple: busiest link's seconds per byte of S
  std::array<double, kLinkClasses> class_share{};  ///< busiest link of each class / s_per_byte
};

struct Plan {
  Collective op = Collective::all_reduce;
  Algorithm algorithm = Algorithm::ring;
  int ranks = 1;
  std::vector<Phase> phases;
};

/// Expands `op` with `algorithm` over the communicators `groups` (GPU ids in group-rank order,
/// all running at once) and loads the topology's links. Throws std::invalid_argument when the
/// algorithm does not apply (tree and nvls are all-reduce only, nvls inside one NVSwitch node
/// whose topology has an nvls_efficiency; hierarchical also does reduce-scatter/all-gather).
Plan make_plan(const Topology& topo, const std::vector<std::vector<int>>& groups, Collective op,
               Algorithm algorithm);

/// make_plan() for the groups of `dim` in `layout` on `nodes` nodes of `spec`, cached for the
/// whole process by everything the plan depends on (thread-safe): routing is the costly part
/// of a small simulation, and a sweep's configurations share layouts. `topology` supplies the
/// graph; it is called only when the plan is not cached yet.
std::shared_ptr<const Plan> shared_plan(const TopologySpec& spec, int nodes, const Layout& layout, GroupDim dim,
                                        Collective c, Algorithm a, const std::function<const Topology&()>& topology);

struct PhaseTime {
  double time_s = 0;
  double transfer_s = 0;                           ///< bandwidth part of time_s
  std::array<double, kLinkClasses> demand{};       ///< link-class demand while it runs (0..1]
};

struct CollectiveTime {
  double time_s = 0;
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
  std::vector<PhaseTime> phases;
};

/// Time of one collective of `bytes` following `plan`, with the fastest protocol.
CollectiveTime time_of(const Plan& plan, double bytes);

// ---- Compatibility with the foundation's analytical interface -------------------------------

/// Shape of one communicator: `ranks` in total, `ranks_per_node` of them in each node; the
/// node's other GPUs run the same collective in their own groups at the same time.
struct GroupShape {
  int ranks = 1;
  int ranks_per_node = 1;
  int nodes() const { return (ranks + ranks_per_node - 1) / ranks_per_node; }
};

struct CollectiveCost {
  double time_s = 0;
  double busbw_bps = 0;
  Algorithm algorithm = Algorithm::ring;
};

/// A collective over DGX-like nodes described by a hardware profile's node section (the
/// topology derived by topology_from_node), NCCL's automatic algorithm choice.
CollectiveCost collective_cost(const hardware::NodeSpec& node, Collective c, double bytes, const GroupShape& g);

}  // namespace clustersim::topologies

namespace clustersim::topologies {

/// One point-to-point transfer of `bytes` between two GPUs (pipeline send/recv): over NVLink
/// when both are in one node, else over the sender's own NIC (rail-optimized, one NIC per GPU).
/// α is NCCL's base latency plus one hop of the link class (hardware.md §3.8).
CollectiveCost p2p_cost(const hardware::NodeSpec& node, double bytes, bool same_node);

}  // namespace clustersim::topologies
