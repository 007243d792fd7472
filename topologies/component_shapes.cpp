#include "topologies/component_shapes.hpp"

#include <algorithm>
#include <map>

namespace clustersim::topologies {

namespace {

struct NodeSets {
  std::vector<int> parent;
  int find(int n) {
    while (parent[std::size_t(n)] != n) n = parent[std::size_t(n)] = parent[std::size_t(parent[std::size_t(n)])];
    return n;
  }
};

// Each node's leaf group as an index inside its component (order of first appearance), or empty
// where two components spanning leaf groups share one, or a partial leaf group makes the
// permutation of groups no symmetry.
std::vector<int> relative_leaf_groups(const Topology& t, NodeSets& sets) {
  const int per_leaf = std::max(1, t.spec().nodes_per_leaf), n_nodes = t.nodes();
  std::vector<int> first_leaf(std::size_t(n_nodes), -1), spans(std::size_t(n_nodes), 0);
  for (int n = 0; n < n_nodes; ++n) {
    int& f = first_leaf[std::size_t(sets.find(n))];
    if (f < 0) f = n / per_leaf;
    else if (f != n / per_leaf) spans[std::size_t(sets.find(n))] = 1;
  }
  std::vector<int> owner(std::size_t((n_nodes + per_leaf - 1) / per_leaf), -1), rel(std::size_t(n_nodes), 0);
  std::vector<int> leaves_seen(std::size_t(n_nodes), 0), last_leaf(std::size_t(n_nodes), -1);
  for (int n = 0; n < n_nodes; ++n) {
    const int c = sets.find(n), leaf = n / per_leaf;
    if (!spans[std::size_t(c)]) continue;
    if (n_nodes % per_leaf != 0) return {};
    int& o = owner[std::size_t(leaf)];
    if (o >= 0 && o != c) return {};  // two components share these uplinks
    o = c;
    if (last_leaf[std::size_t(c)] != leaf) ++leaves_seen[std::size_t(c)], last_leaf[std::size_t(c)] = leaf;
    rel[std::size_t(n)] = leaves_seen[std::size_t(c)] - 1;  // nodes in id order: leaf groups in order
  }
  return rel;
}

}  // namespace

std::vector<std::vector<int>> one_component_per_shape(const Topology& t, const std::vector<std::vector<int>>& groups) {
  NodeSets sets{std::vector<int>(std::size_t(t.nodes()))};
  for (int n = 0; n < t.nodes(); ++n) sets.parent[std::size_t(n)] = n;
  for (const auto& g : groups)
    for (int gpu : g) sets.parent[std::size_t(sets.find(t.node_of(gpu)))] = sets.find(t.node_of(g.front()));
  const std::vector<int> leaf = relative_leaf_groups(t, sets);
  if (leaf.empty()) return groups;
  const int k = t.gpus_per_node();
  std::vector<int> index_in_component(std::size_t(t.nodes()), -1), component_size(std::size_t(t.nodes()), 0);
  std::vector<std::vector<int>> shape(std::size_t(t.nodes()));
  for (int n = 0; n < t.nodes(); ++n) {  // nodes in id order: their index and leaf group in their component
    const int c = sets.find(n);
    index_in_component[std::size_t(n)] = component_size[std::size_t(c)]++;
    shape[std::size_t(c)].push_back(leaf[std::size_t(n)]);
  }
  std::vector<char> has_group(std::size_t(t.nodes()), 0);
  for (const auto& g : groups) {
    const int c = sets.find(t.node_of(g.front()));
    has_group[std::size_t(c)] = 1;
    auto& sh = shape[std::size_t(c)];
    sh.push_back(-1);  // group boundary (and the end of the nodes' leaf groups)
    for (int gpu : g) sh.push_back(index_in_component[std::size_t(t.node_of(gpu))] * k + gpu % k);
  }
  std::map<std::vector<int>, int> first;  // shape → the component that stands for it
  for (int c = 0; c < t.nodes(); ++c)
    if (has_group[std::size_t(c)]) first.emplace(shape[std::size_t(c)], c);
  std::vector<char> routed(std::size_t(t.nodes()), 0);
  for (const auto& [sh, c] : first) routed[std::size_t(c)] = 1;
  std::vector<std::vector<int>> out;
  for (const auto& g : groups)
    if (routed[std::size_t(sets.find(t.node_of(g.front())))]) out.push_back(g);
  return out;
}

}  // namespace clustersim::topologies
