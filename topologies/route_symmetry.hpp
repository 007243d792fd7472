#pragma once
// Relabelling a fat tree's nodes and leaf groups so that searches of the same shape share one
// route search (Topology::routes_from). In a fat tree whose leaf groups are all full, every node
// of a group hangs off the same leaves in the same way, and every group off the same spine, so
// any permutation of the nodes inside each group, together with any permutation of the groups,
// maps the graph onto itself; a route search depends on its destinations only as a set. So the
// search from `src` to `dsts` is the search from a canonical source (node 0 of group 0, the
// same GPU position) to a canonical set, relabelled: the source's group and node first, the
// other nodes of each group ordered by the positions of their destinations, the other groups by
// their nodes' patterns, untouched nodes and groups last in their own order. Why tie-breaks
// survive the relabelling: topology.cpp, Topology::routes_from.
#include <span>
#include <vector>

namespace clustersim::topologies {

struct NodeRelabel {
  std::vector<int> node_to;     ///< node → canonical node
  std::vector<int> node_from;   ///< canonical node → node
  std::vector<int> group_from;  ///< canonical leaf group → leaf group
  int src = 0;                  ///< the canonical source GPU
  std::vector<int> dsts;        ///< the canonical destination GPUs, sorted, without repeats
  // Scratch, kept between calls: the destinations sorted; nodes holding destinations (GPUs
  // [begin, end) of `sorted`) and groups holding them (runs [begin, end)).
  struct Run {
    int node, group, begin, end;
  };
  std::vector<int> sorted;
  std::vector<Run> runs, spans;  // a span's node is unused
  std::vector<char> placed;
};

/// Fills `out` with the canonical relabelling of a search from GPU `src` to `dsts` in a fat tree
/// of `groups` leaf groups of `group_nodes` nodes of `gpus_per_node` GPUs (GPU g is position
/// g % gpus_per_node of node g / gpus_per_node; node n is in group n / group_nodes). Searches
/// related by such a permutation get the same canonical src and dsts.
void canonical_relabel(int gpus_per_node, int group_nodes, int groups, int src, std::span<const int> dsts,
                       NodeRelabel& out);

}  // namespace clustersim::topologies
