#pragma once
// A cluster's network as the models use it: the topology graph, the rank placement and the
// algorithm policy; answers "how long does this collective of the DP (TP, PP, ...) groups
// take, and which link classes does it load". Plans (routed link loads) are computed once per
// (fabric, node count, layout, collective, group dimension, algorithm) in the whole process and
// reused for every size and by every Network with the same inputs (a sweep's configurations
// share them), so the graph itself is built only when a plan must be routed.
#include <map>
#include <memory>
#include <span>
#include <tuple>

#include "sim/task_graph.hpp"
#include "topologies/collective.hpp"
#include "topologies/placement.hpp"
#include "topologies/topology.hpp"

namespace clustersim::topologies {

class Network {
 public:
  /// `nodes` scale-up nodes of `spec`; throws std::invalid_argument on a broken spec.
  Network(const TopologySpec& spec, int nodes, Layout layout, AlgorithmChoice choice = AlgorithmChoice::automatic);

  /// Nodes needed to hold `gpus` GPUs of `spec`.
  static int nodes_for(const TopologySpec& spec, int gpus);

  /// The routed graph, built on first use.
  const Topology& topology() const;
  const Layout& layout() const { return layout_; }

  /// One collective of `bytes` (nccl-tests S) by every group of `dim` at once. The algorithm
  /// is the forced one for all-reduce (hierarchical also for reduce-scatter and all-gather;
  /// it degrades to ring inside one node, nvls to the automatic choice where it cannot serve
  /// the group), else NCCL's fastest for this size and group shape.
  CollectiveTime cost(Collective c, GroupDim dim, double bytes) const;

 private:
  const Plan& plan(Collective c, GroupDim dim, Algorithm a) const;
  int node_of(int gpu) const { return gpu / spec_.gpus_per_node; }

  TopologySpec spec_;
  int nodes_;
  Layout layout_;
  AlgorithmChoice choice_;
  mutable std::unique_ptr<Topology> topo_;
  mutable std::map<std::tuple<int, int, int>, std::shared_ptr<const Plan>> plans_;
};

inline constexpr std::size_t kMaxExtraUses = 4;

/// Appends one task per phase of `t` to `graph` on `stream`, in order, the first after `deps`.
/// Each phase task uses link class c as resource `link_resource_base + c` with its demand,
/// so concurrent collectives over the same link class share its bandwidth (max-min, runner).
/// Returns the last task's id. At most kMaxExtraUses extra uses.
sim::TaskId append_collective(sim::TaskGraph& graph, const CollectiveTime& t, std::int32_t stream,
                              std::span<const sim::TaskId> deps, std::int32_t link_resource_base,
                              std::span<const sim::ResourceUse> extra_uses = {}, std::int32_t priority = 0,
                              std::int32_t tag = 0);

}  // namespace clustersim::topologies
