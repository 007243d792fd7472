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

#include "topologies/nccl_tuning.hpp"
#include "topologies/placement.hpp"
#include "topologies/topology.hpp"
#include "units/units.hpp"

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

/// Plans already routed, by everything a plan depends on (the topology spec, node count, layout,
/// group dimension, collective, algorithm and member ranks), compared with the key's defaulted
/// operator==. Routing is the costly part of a small simulation and a sweep's configurations
/// share layouts, so a session (a sweep, a CLI run) owns one cache and hands it to every
/// Network it builds. Thread-safe; plans are immutable once made; bounded.
class PlanCache {
 public:
  struct Key {
    TopologySpec spec;
    int nodes = 0;
    Layout layout;
    GroupDim dim = GroupDim::dp;
    Collective op = Collective::all_reduce;
    Algorithm algorithm = Algorithm::ring;
    std::vector<int> members;  ///< group ranks taking part; empty: the whole group
    bool operator==(const Key&) const = default;
  };
  PlanCache();
  ~PlanCache();
  PlanCache(const PlanCache&) = delete;
  PlanCache& operator=(const PlanCache&) = delete;
  /// The plan for `key`, routed on `topology()` (called only on a miss).
  std::shared_ptr<const Plan> get(const Key& key, const std::function<const Topology&()>& topology);
  /// The process-wide cache, for callers that do not own one.
  static PlanCache& shared();
  /// A built topology of (spec, nodes) that no Network holds now, else a new one. Building one
  /// (and warming its route cache) is a large share of a small simulation, and a sweep's
  /// Networks, one per configuration, share spec and node count; a Network borrows one for its
  /// lifetime and hands it back (`give_topology`) when destroyed. A borrowed topology serves one
  /// Network at a time (routes_from is not thread-safe); routes are a pure function of the graph,
  /// so a reused one answers exactly as a fresh one. At most a few are kept idle.
  std::unique_ptr<Topology> take_topology(const TopologySpec& spec, int nodes);
  void give_topology(std::unique_ptr<Topology> t);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The communicators of `dim` in `layout`, each restricted to `members` (group ranks, in order;
/// empty: all of them).
std::vector<std::vector<int>> member_groups(const Layout& layout, GroupDim dim, const std::vector<int>& members);

struct PhaseTime {
  units::Seconds time;
  units::Seconds transfer;                         ///< bandwidth part of time
  std::array<double, kLinkClasses> demand{};       ///< link-class demand while it runs (0..1]
};

struct CollectiveTime {
  units::Seconds time;
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::simple;
  std::vector<PhaseTime> phases;
  Collective op = Collective::all_reduce;  ///< what ran and over which group (Network::cost sets them; trace names)
  GroupDim group = GroupDim::tp;
};

/// Time of one collective of `bytes` following `plan`, with the fastest protocol.
CollectiveTime time_of(const Plan& plan, units::Bytes bytes);

/// The share `f` (0..1] of collective `c`: every phase's time and transfer times f, at the same
/// link demands (a transfer split into the part overlapped with compute and the rest).
CollectiveTime share_of(const CollectiveTime& c, double f);

/// Collective `c` run no faster than `at_least` (endpoints that cannot feed the links at their
/// rate: DeepEP's and HybridEP's kernels on the SMs they are given): every phase stretched alike,
/// its link demands lowered in proportion (the same bytes over the longer time). `c` itself when
/// it already takes as long.
CollectiveTime paced(const CollectiveTime& c, units::Seconds at_least);

}  // namespace clustersim::topologies
