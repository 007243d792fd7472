#include "topologies/topology.hpp"

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/iterator/counting_iterator.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "topologies/route_symmetry.hpp"

namespace clustersim::topologies {

const char* link_class_name(int c) {
  static const char* names[kLinkClasses] = {"nvlink-out", "nvlink-in", "pcie-up",   "pcie-down",
                                            "nic-out",    "nic-in",    "leaf-up",   "leaf-down"};
  return c >= 0 && c < kLinkClasses ? names[c] : "?";
}

namespace {

// Compressed sparse rows built once from the wired links, each edge holding its link id: the
// out-edges keep the order the links were wired in (a stable sort by source), which the search's
// tie-breaks rely on.
using BoostGraph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, int>;
using Vertex = boost::graph_traits<BoostGraph>::vertex_descriptor;

constexpr int kIntraNodeCost = 1;   // route cost of a hop inside a node
constexpr int kNicCost = 10;        // a hop between a NIC and its leaf
constexpr int kUplinkCost = 20;     // a hop between a leaf and the spine: taken only when needed
constexpr int kSpineGroup = -1;
constexpr int kNoNode = -1;

int route_cost(LinkKind kind) {
  return kind == LinkKind::uplink ? kUplinkCost : kind == LinkKind::nic ? kNicCost : kIntraNodeCost;
}

void check(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

constexpr char kWhite = 0, kGray = 1, kBlack = 2;

}  // namespace

struct Topology::Graph {
  struct QueueEntry {
    int key;
    Vertex second;  // the vertex
    int dist;       // its distance when pushed: stale once the distance improved
    bool operator>(const QueueEntry& o) const { return key != o.key ? key > o.key : second > o.second; }
  };
  std::vector<Vertex> gpu;           // GPU index → vertex
  std::vector<Vertex> link_source;   // link id → the vertex it leaves
  std::vector<Vertex> link_target;   // link id → the vertex it enters (until adj is built)
  std::vector<int> group;            // vertex → leaf group (kSpineGroup for the spine)
  std::vector<int> node;             // vertex → node (kNoNode for leaf and spine switches)
  // Scratch for routes_from, reset only where a search touched it.
  mutable std::vector<int> pred;     // vertex → link id it was reached by (−1: none)
  mutable std::vector<int> dist;
  mutable std::vector<char> color;       // white, gray, black (Boost's colour map)
  mutable std::vector<QueueEntry> heap;  // the A* queue (a binary min-heap by key, then vertex)
  // Cost of the cheapest path from the top of the fabric (the spine, or the only leaf) to each
  // vertex; links come in pairs of equal cost, so it is also the cost back up.
  std::vector<int> from_top;
  mutable std::vector<int> route;
  mutable std::vector<Vertex> touched;
  mutable std::vector<char> is_target;
  mutable std::vector<char> target_node;   // node → holds a target of the current search
  mutable std::vector<char> target_group;  // leaf group → holds a target of the current search
  // Routes already found, by (source, destinations): the collectives of one group dimension
  // route the same flows (a ring all-reduce, reduce-scatter and all-gather share their ring
  // edges), and a search is a pure function of its source and destinations.
  struct Routes {
    std::vector<int> links;            // every route's links, one after the other
    std::vector<std::uint32_t> end;    // route i is links[end[i−1], end[i])
  };
  struct KeyHash {
    std::size_t operator()(const std::vector<int>& k) const {
      std::size_t h = k.size();
      for (int x : k) h ^= std::hash<int>{}(x) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
      return h;
    }
  };
  static constexpr std::size_t kMaxCachedLinks = std::size_t(1) << 24;  // bounded: ~100 MB
  mutable std::unordered_map<std::vector<int>, Routes, KeyHash> routes_cache;
  mutable std::size_t cached_links = 0;
  mutable std::vector<int> key_scratch;
  // Rotation by whole leaf groups (see routes_from): GPUs, nodes and leaves per group, the
  // uplink link ids (2 per leaf, first) and links per node (then node by node); rotation is
  // off (group_gpus 0) unless every group is full and a spine joins them.
  int group_gpus = 0, group_nodes = 0, group_leaves = 0, leaves = 0, uplink_ids = 0, node_links = 0;
  mutable std::vector<int> mapped_route;
  // Routes by shape (route_symmetry.hpp), by (canonical source, canonical destinations).
  mutable std::unordered_map<std::vector<int>, Routes, KeyHash> shape_cache;
  mutable std::size_t shape_links = 0;
  mutable NodeRelabel relabel;
  mutable std::vector<int> key_shape;
  std::vector<int> link_unit;  // link id → its leaf (uplinks) or node (the rest)
  /// Link `id` of a route of the canonical search, in the labels of the search relabelled.
  int unmap_link(int id) const {
    const int u = link_unit[std::size_t(id)];
    if (id < uplink_ids) return id + 2 * (relabel.group_from[std::size_t(u / group_leaves)] - u / group_leaves) * group_leaves;
    return id + (relabel.node_from[std::size_t(u)] - u) * node_links;
  }
  /// route_all(src, dsts), from the canonical search of its shape (searched on first use).
  Routes route_by_shape(int src, std::span<const int> dsts, int gpus_per_node) const;
  /// Link `id` of a route found from group 0, as seen from `shift` leaf groups further on.
  int rotate_link(int id, int shift, int nodes) const {
    const int u = link_unit[std::size_t(id)], up = id < uplink_ids;
    const int n = up ? leaves : nodes, v = u + shift * (up ? group_leaves : group_nodes);
    return id + ((v >= n ? v - n : v) - u) * (up ? 2 : node_links);
  }

  /// Out-edges in the graph's order, as one flat array (what the search walks).
  struct Adj {
    int to, weight, link;
  };
  std::vector<std::size_t> adj_start;  // vertex → first out-edge in adj
  std::vector<Adj> adj;
  void build_adjacency(const std::vector<Link>& links) {
    std::vector<std::pair<Vertex, Vertex>> edges(links.size());
    for (std::size_t id = 0; id < links.size(); ++id) edges[id] = {link_source[id], link_target[id]};
    const BoostGraph g(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(),
                       boost::counting_iterator<int>(0), node.size());
    link_target = {};
    adj_start.assign(node.size() + 1, 0);
    adj.clear();
    for (std::size_t u = 0; u < node.size(); ++u) {
      for (auto [e, end] = boost::out_edges(u, g); e != end; ++e)
        adj.push_back({int(boost::target(*e, g)), route_cost(links[std::size_t(g[*e])].kind), g[*e]});
      adj_start[u + 1] = adj.size();
    }
  }
  // A* over the graph's out-edges in Boost's adjacency order (a CSR copy made once), with a
  // min-priority queue and lazy deletion: the loop of Boost's breadth_first_visit (white, gray,
  // black colours; a gray vertex is pushed again when its distance improves) written out, so a
  // search costs what it touches rather than the whole graph and no visitor or property-map
  // indirection per edge (a collective routes one search per GPU; the spine alone has one edge
  // per leaf). The heuristic is a consistent lower bound on the cost left: 0 inside a target's
  // node; from another node, out through a NIC and back in through one; from a leaf, down a NIC
  // link; plus two uplinks when no target hangs off the same leaf group. It keeps a search from
  // flooding the fabric or the nodes under a leaf.
  /// Routes from `src` to each of `dsts` (one search); throws when one cannot be reached.
  Routes route_all(int src, std::span<const int> dsts) const;
  /// Runs until every target (is_target) is examined or nothing is left; returns how many were not.
  //
  // Entries whose key exceeds `bound`, an upper bound on every target's distance (through the
  // top of the fabric), are not queued: a search ends once it has popped every target, and a
  // consistent heuristic pops in order of key, so such an entry would never have been popped.
  // The pops, hence the routes, are those of the search that queues everything; it only saves
  // queueing the hundreds of leaves a spine expansion reaches.
  std::size_t search(Vertex s, std::size_t left, int bound) const {
    color[s] = kGray;
    touched.push_back(s);
    push(s, estimate(s));
    while (left > 0) {
      drop_stale();
      if (heap.empty()) break;
      const Vertex u = heap.front().second;
      std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
      heap.pop_back();
      if (is_target[u]) is_target[u] = 0, --left;
      const int du = dist[u];
      for (std::size_t k = adj_start[u], end = adj_start[u + 1]; k < end; ++k) {
        const Adj& e = adj[k];
        const auto v = static_cast<Vertex>(e.to);
        const char c = color[v];
        if (c == kBlack) continue;
        const int d = du + e.weight;
        if (c == kWhite) {
          const int h = estimate(v);
          if (d + h > bound) continue;  // never popped: left white, as if not reached
          dist[v] = d, pred[v] = e.link, color[v] = kGray;
          touched.push_back(v);
          push(v, h);
        } else if (d < dist[v]) {
          dist[v] = d, pred[v] = e.link;  // the older entry is stale either way
          const int h = estimate(v);
          if (d + h <= bound) push(v, h);
        }
      }
      color[u] = kBlack;
    }
    heap.clear();
    return left;
  }

  void push(Vertex v, int h) const {
    heap.push_back({dist[v] + h, v, dist[v]});
    std::push_heap(heap.begin(), heap.end(), std::greater<>{});
  }
  void drop_stale() const {
    while (!heap.empty() && heap.front().dist != dist[heap.front().second]) {
      std::pop_heap(heap.begin(), heap.end(), std::greater<>{});
      heap.pop_back();
    }
  }
  /// Dijkstra from `top` over every vertex (once per topology) into from_top.
  void distances_from(Vertex top) {
    from_top.assign(adj_start.size() - 1, std::numeric_limits<int>::max());
    std::vector<std::pair<int, Vertex>> q{{0, top}};
    from_top[top] = 0;
    while (!q.empty()) {
      std::pop_heap(q.begin(), q.end(), std::greater<>{});
      const auto [d, u] = q.back();
      q.pop_back();
      if (d != from_top[u]) continue;
      for (std::size_t k = adj_start[u]; k < adj_start[u + 1]; ++k)
        if (d + adj[k].weight < from_top[static_cast<std::size_t>(adj[k].to)]) {
          from_top[static_cast<std::size_t>(adj[k].to)] = d + adj[k].weight;
          q.push_back({d + adj[k].weight, static_cast<Vertex>(adj[k].to)});
          std::push_heap(q.begin(), q.end(), std::greater<>{});
        }
    }
  }
  int estimate(Vertex v) const {
    const int n = node[v], grp = group[v];
    if (n != kNoNode && target_node[static_cast<std::size_t>(n)]) return 0;
    const int fabric = grp == kSpineGroup ? kUplinkCost : target_group[static_cast<std::size_t>(grp)] ? 0 : 2 * kUplinkCost;
    return fabric + (n != kNoNode ? 2 * kNicCost : kNicCost);
  }
  Vertex vertex(int group_id, int node_id) {
    group.push_back(group_id);
    node.push_back(node_id);
    return static_cast<Vertex>(node.size() - 1);
  }
  /// Room for `nodes` nodes like node 0 (wired just before).
  void reserve(std::vector<Link>& links, int nodes) {
    const std::size_t per_node_links = links.size() - fabric_links, per_node_vertices = node.size() - fabric_vertices;
    links.reserve(fabric_links + per_node_links * std::size_t(nodes));
    link_source.reserve(links.capacity()), link_target.reserve(links.capacity());
    node.reserve(fabric_vertices + per_node_vertices * std::size_t(nodes));
    group.reserve(node.capacity());
  }
  std::size_t fabric_links = 0, fabric_vertices = 0;  // before node 0
  /// One link each way between `lower` and `upper` (towards the spine), recorded in `links`.
  void connect(std::vector<Link>& links, Vertex lower, Vertex upper, double bps, LinkKind kind) {
    for (bool up : {true, false}) {
      links.push_back({bps, kind, up});
      link_source.push_back(up ? lower : upper);
      link_target.push_back(up ? upper : lower);
    }
  }
  /// Node n's GPUs and scale-up fabric; returns what each NIC hangs off: the GPU next to it
  /// (NVLink / xGMI nodes) or a PCIe switch.
  std::vector<Vertex> wire_node(const TopologySpec& spec, int n, std::vector<Link>& links) {
    const int k = spec.gpus_per_node, leaf_group = n / spec.nodes_per_leaf;
    const double nvlink = spec.nvlink_bandwidth.si() * spec.nvlink_efficiency, pcie = spec.pcie_bandwidth.si() * spec.pcie_efficiency;
    std::vector<Vertex> gpus(static_cast<std::size_t>(k));
    for (int i = 0; i < k; ++i) gpus[static_cast<std::size_t>(i)] = gpu[static_cast<std::size_t>(n * k + i)] = vertex(leaf_group, n);
    std::vector<Vertex> nic_parent(static_cast<std::size_t>(spec.nics_per_node));
    if (spec.node_kind == NodeKind::pcie) {
      const Vertex host = vertex(leaf_group, n);
      const int switches = (k + spec.gpus_per_pcie_switch - 1) / spec.gpus_per_pcie_switch;
      std::vector<Vertex> sw(static_cast<std::size_t>(switches));
      for (auto& v : sw) {
        v = vertex(leaf_group, n);
        connect(links, v, host, pcie, LinkKind::pcie);
      }
      for (int i = 0; i < k; ++i) connect(links, gpus[static_cast<std::size_t>(i)], sw[static_cast<std::size_t>(i / spec.gpus_per_pcie_switch)], pcie, LinkKind::pcie);
      for (int j = 0; j < spec.nics_per_node; ++j)
        nic_parent[static_cast<std::size_t>(j)] = sw[static_cast<std::size_t>(j * switches / spec.nics_per_node)];
      return nic_parent;
    }
    if (spec.node_kind == NodeKind::full_mesh) {
      // One link per GPU pair, the GPU's fabric bandwidth split evenly over its peers.
      const double per_peer = k > 1 ? nvlink / (k - 1) : nvlink;
      for (std::size_t i = 0; i < gpus.size(); ++i)
        for (std::size_t j = i + 1; j < gpus.size(); ++j) connect(links, gpus[i], gpus[j], per_peer, LinkKind::nvlink);
    } else {
      const Vertex nvswitch = vertex(leaf_group, n);
      for (auto v : gpus) connect(links, v, nvswitch, nvlink, LinkKind::nvlink);
    }
    for (int j = 0; j < spec.nics_per_node; ++j)
      nic_parent[static_cast<std::size_t>(j)] = gpus[static_cast<std::size_t>(j * k / spec.nics_per_node)];
    return nic_parent;
  }
};

Topology::~Topology() = default;
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;
std::size_t Topology::num_vertices() const { return g_->node.size(); }

Topology::Topology(const TopologySpec& spec, int nodes, bool rotate) : spec_(spec), nodes_(nodes), g_(std::make_unique<Graph>()) {
  validate(spec, nodes);
  const int k = spec.gpus_per_node;
  const double pcie = spec.pcie_bandwidth.si() * spec.pcie_efficiency;
  const double nic = spec.nic_bandwidth.si() * spec.nic_efficiency;
  const int groups = (nodes + spec.nodes_per_leaf - 1) / spec.nodes_per_leaf;
  const int leaves = spec.rail_optimized ? groups * spec.nics_per_node : groups;
  std::vector<Vertex> leaf(static_cast<std::size_t>(leaves));
  for (std::size_t i = 0; i < leaf.size(); ++i)
    leaf[i] = g_->vertex(spec.rail_optimized ? int(i) / spec.nics_per_node : int(i), kNoNode);
  Vertex top = leaf.front();
  if (leaves > 1) {
    // One spine vertex stands for the spine layer; each leaf's uplinks are one trunk of
    // (downlinks × NIC rate / oversubscription), i.e. ideal ECMP over the parallel uplinks.
    const Vertex spine = top = g_->vertex(kSpineGroup, kNoNode);
    const int downlinks = spec.nodes_per_leaf * (spec.rail_optimized ? 1 : spec.nics_per_node);
    for (auto v : leaf) g_->connect(links_, v, spine, downlinks * nic / spec.oversubscription, LinkKind::uplink);
  }
  g_->gpu.resize(static_cast<std::size_t>(nodes) * static_cast<std::size_t>(k));
  const std::size_t first_node_link = links_.size();
  g_->fabric_links = links_.size(), g_->fabric_vertices = g_->node.size();
  for (int n = 0; n < nodes; ++n) {
    if (n == 1) g_->reserve(links_, nodes);  // node 0 told how much each node adds
    const std::vector<Vertex> nic_parent = g_->wire_node(spec, n, links_);
    const int group = n / spec.nodes_per_leaf;
    for (int j = 0; j < spec.nics_per_node; ++j) {
      const Vertex v = g_->vertex(group, n);
      g_->connect(links_, nic_parent[static_cast<std::size_t>(j)], v, pcie, LinkKind::pcie);
      g_->connect(links_, v, leaf[static_cast<std::size_t>(spec.rail_optimized ? group * spec.nics_per_node + j : group)], nic, LinkKind::nic);
    }
  }
  const std::size_t nv = g_->node.size();
  if (rotate && groups > 1 && nodes % spec.nodes_per_leaf == 0) {  // every node wires the same links
    g_->group_gpus = spec.nodes_per_leaf * k, g_->group_nodes = spec.nodes_per_leaf;
    g_->group_leaves = leaves / groups, g_->leaves = leaves;
    g_->uplink_ids = int(first_node_link), g_->node_links = int((links_.size() - first_node_link) / std::size_t(nodes));
    for (int id = 0; id < int(links_.size()); ++id)
      g_->link_unit.push_back(id < g_->uplink_ids ? id / 2 : (id - g_->uplink_ids) / g_->node_links);
  }
  g_->pred.assign(nv, -1);
  g_->dist.assign(nv, std::numeric_limits<int>::max());
  g_->color.assign(nv, 0);
  g_->build_adjacency(links_);
  g_->distances_from(top);
  g_->is_target.assign(nv, 0);
  g_->target_node.assign(static_cast<std::size_t>(nodes), 0);
  g_->target_group.assign(static_cast<std::size_t>(groups), 0);
  // Every GPU must reach every other (only a wrong generator above fails): links come in pairs,
  // so a GPU the top reaches reaches the top, and through it every GPU.
  for (std::size_t i = 0; i < g_->gpu.size(); ++i)
    check(g_->from_top[g_->gpu[i]] < std::numeric_limits<int>::max(),
          "the topology is disconnected at GPU " + std::to_string(i));
}

void Topology::routes_from(int src, std::span<const int> dsts,
                           const std::function<void(std::size_t, std::span<const int>)>& visit) const {
  auto& G = *g_;
  if (src < 0 || src >= gpus()) check(false, "route from a GPU outside the topology");
  for (int d : dsts)
    if (d < 0 || d >= gpus()) check(false, "route to a GPU outside the topology");
  // Rotating the cluster by whole leaf groups (node n to n + j·nodes_per_leaf, modulo the node
  // count, leaves and links alike) maps the graph onto itself, with the spine fixed; the
  // search's heuristic and bound are invariant, and vertex ids (its heap's tie-break) keep their
  // order inside a node and a group's leaves, the only places where two equal-key entries can
  // relax one vertex (a leaf's NICs are in its own group; another group's leaves are reached only
  // through the spine). So the routes from a source in group j are those from the source j groups
  // back, rotated: one search per source position within a group, not per GPU. A miss is then
  // searched by shape (route_by_shape): any permutation of nodes inside groups and of groups is
  // an automorphism too, and it also keeps vertex order inside a node and a group's leaves; the
  // cheapest relaxation of a leaf comes from the source's node alone (another node of the group
  // is entered only through a leaf, 20 more), of another group's leaf from the spine alone.
  const int shift = G.group_gpus > 0 ? src / G.group_gpus : 0;
  std::vector<int>& key = G.key_scratch;
  key.assign(1, src - shift * G.group_gpus);
  for (int d : dsts) key.push_back(shift > 0 ? (d - shift * G.group_gpus + gpus()) % gpus() : d);
  auto hit = G.routes_cache.find(key);
  if (hit == G.routes_cache.end()) {
    const std::span<const int> rotated_dsts = std::span<const int>(key).subspan(1);
    Graph::Routes found = G.group_gpus > 0 ? G.route_by_shape(key.front(), rotated_dsts, spec_.gpus_per_node)
                                           : G.route_all(key.front(), rotated_dsts);
    if (G.cached_links + found.links.size() > Graph::kMaxCachedLinks) G.routes_cache.clear(), G.cached_links = 0;
    G.cached_links += found.links.size();
    hit = G.routes_cache.emplace(key, std::move(found)).first;
  }
  const Graph::Routes& r = hit->second;
  std::uint32_t begin = 0;
  for (std::size_t i = 0; i < r.end.size(); ++i) {
    std::span<const int> route(r.links.data() + begin, r.end[i] - begin);
    if (shift > 0) {
      G.mapped_route.clear();
      for (int e : route) G.mapped_route.push_back(G.rotate_link(e, shift, nodes_));
      route = G.mapped_route;
    }
    visit(i, route);
    begin = r.end[i];
  }
}

Topology::Graph::Routes Topology::Graph::route_by_shape(int src, std::span<const int> dsts, int k) const {
  canonical_relabel(k, group_nodes, leaves / group_leaves, src, dsts, relabel);
  std::vector<int>& shape = key_shape;
  shape.assign(1, relabel.src);
  shape.insert(shape.end(), relabel.dsts.begin(), relabel.dsts.end());
  auto hit = shape_cache.find(shape);
  if (hit == shape_cache.end()) {
    Routes found = route_all(relabel.src, relabel.dsts);
    if (shape_links + found.links.size() > kMaxCachedLinks) shape_cache.clear(), shape_links = 0;
    shape_links += found.links.size();
    hit = shape_cache.emplace(shape, std::move(found)).first;
  }
  const Routes& canonical = hit->second;
  Routes out;
  for (int d : dsts) {
    const int c = relabel.node_to[std::size_t(d / k)] * k + d % k;
    const std::size_t i = std::size_t(std::lower_bound(relabel.dsts.begin(), relabel.dsts.end(), c) - relabel.dsts.begin());
    for (std::uint32_t e = i > 0 ? canonical.end[i - 1] : 0; e < canonical.end[i]; ++e)
      out.links.push_back(unmap_link(canonical.links[e]));
    out.end.push_back(std::uint32_t(out.links.size()));
  }
  return out;
}

Topology::Graph::Routes Topology::Graph::route_all(int src, std::span<const int> dsts) const {
  std::size_t left = 0;
  for (int d : dsts) {  // is_target, target_node and target_group are all zero between calls
    const Vertex v = gpu[static_cast<std::size_t>(d)];
    if (!is_target[v]) ++left, is_target[v] = 1;
    target_node[static_cast<std::size_t>(node[v])] = 1;
    target_group[static_cast<std::size_t>(group[v])] = 1;
  }
  const Vertex s = gpu[static_cast<std::size_t>(src)];
  touched.clear();
  dist[s] = 0;
  // Through the top of the fabric: up from the source, down to the farthest target (no bound
  // where the top does not reach a GPU; the search then reports the topology disconnected).
  long long bound = from_top[s];
  for (int d : dsts) bound = std::max<long long>(bound, from_top[s] + (long long)from_top[gpu[static_cast<std::size_t>(d)]]);
  if (left > 0) left = search(s, left, int(std::min<long long>(bound, std::numeric_limits<int>::max())));
  Routes out;
  bool unreachable = left > 0;
  for (std::size_t i = 0; i < dsts.size() && !unreachable; ++i) {
    route.clear();
    for (Vertex v = gpu[static_cast<std::size_t>(dsts[i])]; v != s;) {
      const int e = pred[v];
      if (e < 0) { unreachable = true; break; }
      route.push_back(e);
      v = link_source[static_cast<std::size_t>(e)];
    }
    out.links.insert(out.links.end(), route.rbegin(), route.rend());
    out.end.push_back(static_cast<std::uint32_t>(out.links.size()));
  }
  touched.push_back(s);
  for (Vertex v : touched) {
    pred[v] = -1;
    dist[v] = std::numeric_limits<int>::max();
    color[v] = kWhite;
  }
  for (int d : dsts) {
    const Vertex v = gpu[static_cast<std::size_t>(d)];
    is_target[v] = 0;
    target_node[static_cast<std::size_t>(node[v])] = 0;
    target_group[static_cast<std::size_t>(group[v])] = 0;
  }
  if (unreachable)
    check(false, "the topology is disconnected: GPU " + std::to_string(src) + " cannot reach every GPU it must");
  return out;
}

}  // namespace clustersim::topologies
