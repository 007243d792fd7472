#pragma once
// Routing a collective plan once per distinct component of its groups. Groups that share a node
// are in one component. A component loads its own nodes' links (NVLink, PCIe, their NICs) and,
// when it spans leaf groups, their uplinks; inside one leaf group its traffic turns at the leaf.
// Nodes are wired alike, and permuting the nodes inside a leaf group, or whole (full) leaf groups,
// maps the fabric onto itself (route_symmetry.hpp). So where no two components share an uplink
// (those spanning leaf groups own theirs), two components of the same shape (each node's leaf
// group and each group's GPUs, as positions in the component, in order) load their links
// identically, and routing one per shape finds the busiest link per class of all: a TP plan on
// 16k GPUs routes one node, not 2,048; DeepSeek-V3's 32 EP groups of 8 nodes route one; 16
// pipeline stages' DP rings route one stage. Where components share an uplink, all are routed.
#include <vector>

#include "topologies/topology.hpp"

namespace clustersim::topologies {

/// The groups of one component per shape (all of `groups` where components share an uplink), in
/// their order; make_plan routes these instead of all.
std::vector<std::vector<int>> one_component_per_shape(const Topology& t, const std::vector<std::vector<int>>& groups);

}  // namespace clustersim::topologies
