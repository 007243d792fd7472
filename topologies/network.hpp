#pragma once
// A cluster's network as the models use it: the topology graph, the rank placement and the
// algorithm policy; answers "how long does this collective (or send) of the TP, CP, PP or DP
// groups take, and which link classes does it load". Every transfer of the step model comes
// from here. Plans (routed link loads) come from a PlanCache shared by every Network of a
// session (a sweep's configurations share them), so the graph itself is built only when a plan
// must be routed. All const methods are thread-safe.
#include <map>
#include <memory>
#include <mutex>
#include <vector>
#include <span>
#include <tuple>

#include "sim/task_graph.hpp"
#include "topologies/collective.hpp"
#include "topologies/placement.hpp"
#include "topologies/topology.hpp"

namespace clustersim::topologies {

class Network {
 public:
  /// `nodes` scale-up nodes of `spec`; throws std::invalid_argument on a broken spec. Plans come
  /// from `cache` (the process-wide one when null), which must outlive the Network.
  Network(const TopologySpec& spec, int nodes, Layout layout, AlgorithmChoice choice = AlgorithmChoice::automatic,
          PlanCache* cache = nullptr);
  Network(Network&&) noexcept;
  ~Network();

  /// Nodes needed to hold `gpus` GPUs of `spec`.
  static int nodes_for(const TopologySpec& spec, int gpus);

  /// The routed graph, built on first use.
  const Topology& topology() const;
  const TopologySpec& spec() const { return spec_; }
  const Layout& layout() const { return layout_; }

  /// One collective of `bytes` (nccl-tests S) by every group of `dim` at once, each restricted
  /// to `members` (group ranks; empty: the whole group). The algorithm is the forced one for
  /// all-reduce (hierarchical also for reduce-scatter and all-gather; it degrades to ring
  /// inside one node, nvls to the automatic choice where it cannot serve the group), else
  /// NCCL's fastest for this size and group shape. send_recv sends from each member to the
  /// next (a pipeline send: members {from, to}; a ring step: all of them).
  CollectiveTime cost(Collective c, GroupDim dim, units::Bytes bytes, const std::vector<int>& members = {}) const;

  /// One GPU's copy of `bytes` to or from host memory over its host link (cudaMemcpyAsync on a
  /// copy engine): the link's rate at the PCIe copy efficiency.
  units::Seconds host_copy_time(units::Bytes bytes) const;

  /// Whether the members (all: empty) of a `dim` group sit in more than one node.
  bool spans_nodes(GroupDim dim, const std::vector<int>& members = {}) const;

 private:
  const Plan& plan(Collective c, GroupDim dim, Algorithm a, const std::vector<int>& members) const;
  CollectiveTime fastest(Collective c, GroupDim dim, units::Bytes bytes, const std::vector<int>& members) const;
  int node_of(int gpu) const { return gpu / spec_.gpus_per_node; }

  TopologySpec spec_;
  int nodes_;
  Layout layout_;
  AlgorithmChoice choice_;
  PlanCache* cache_;
  std::unique_ptr<std::mutex> mutex_;  // guards topo_ and plans_
  mutable std::unique_ptr<Topology> topo_;
  mutable std::map<std::tuple<int, int, int, std::vector<int>>, std::shared_ptr<const Plan>> plans_;
};

/// The layout a plan of `dim` is cached under: same communicators of `dim` as `layout`
/// (groups_of), with every other dimension folded into one inside and one outside it, so
/// layouts that differ elsewhere share plans.
Layout plan_layout(const Layout& layout, GroupDim dim);

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
