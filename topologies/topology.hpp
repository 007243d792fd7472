#pragma once
// The network of a cluster as a Boost.Graph: GPUs, NVSwitch / PCIe switches, NICs, leaf and
// spine switches, joined by directed links (one per direction) with an effective bandwidth.
// Built from a TopologySpec, never from a hand-listed edge list. Boost stays inside
// topology.cpp; callers see integer GPU and link ids.
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "topologies/topology_spec.hpp"

namespace clustersim::topologies {

/// Which kind of hardware a link is; links of one kind and direction form a link class, the
/// unit of bandwidth sharing in the step simulation.
enum class LinkKind { nvlink, pcie, nic, uplink };
inline constexpr int kLinkKinds = 4;
inline constexpr int kLinkClasses = 2 * kLinkKinds;  ///< kind × {up, down}
const char* link_class_name(int link_class);

struct Link {
  double bps = 0;       ///< effective bytes/s in this direction (spec × efficiency)
  LinkKind kind = LinkKind::nvlink;
  bool up = true;       ///< towards the spine (GPU→switch, GPU→NIC, NIC→leaf, leaf→spine)
  int link_class() const { return 2 * static_cast<int>(kind) + (up ? 0 : 1); }
};

class Topology {
 public:
  /// Builds `nodes` scale-up nodes and the fabric joining them. Throws std::invalid_argument
  /// with a one-line reason when the spec cannot make a working network. `rotate`: route from
  /// one leaf group and map the routes to the others where the fabric allows (routes_from);
  /// false searches from every GPU (the same routes, slower: what the tests compare against).
  Topology(const TopologySpec& spec, int nodes, bool rotate = true);
  /// Throws std::invalid_argument with a one-line reason when `spec` cannot make a network of
  /// `nodes` nodes (what the constructor checks before building).
  static void validate(const TopologySpec& spec, int nodes);
  ~Topology();
  Topology(Topology&&) noexcept;
  Topology& operator=(Topology&&) noexcept;

  const TopologySpec& spec() const { return spec_; }
  int nodes() const { return nodes_; }
  int gpus_per_node() const { return spec_.gpus_per_node; }
  int gpus() const { return nodes_ * spec_.gpus_per_node; }
  int node_of(int gpu) const { return gpu / spec_.gpus_per_node; }
  bool has_nvlink() const { return spec_.node_kind != NodeKind::pcie; }
  const std::vector<Link>& links() const { return links_; }
  std::size_t num_vertices() const;

  /// Cheapest routes (A* with the pop order of Boost's breadth_first_visit; intra-node hops
  /// cost less than NIC hops, which cost less than spine hops) from GPU `src` to each of `dsts`; calls
  /// visit(i, links of the route to dsts[i]) in order. Uses scratch space inside the object:
  /// one search at a time per Topology (not thread-safe).
  void routes_from(int src, std::span<const int> dsts,
                   const std::function<void(std::size_t, std::span<const int>)>& visit) const;

 private:
  struct Graph;
  TopologySpec spec_;
  int nodes_ = 0;
  std::vector<Link> links_;
  std::unique_ptr<Graph> g_;
};

}  // namespace clustersim::topologies
