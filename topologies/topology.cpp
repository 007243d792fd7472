#include "topologies/topology.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/property_map/property_map.hpp>

#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string>

namespace clustersim::topologies {

const char* link_class_name(int c) {
  static const char* names[kLinkClasses] = {"nvlink-out", "nvlink-in", "pcie-up",   "pcie-down",
                                            "nic-out",    "nic-in",    "leaf-up",   "leaf-down"};
  return c >= 0 && c < kLinkClasses ? names[c] : "?";
}

namespace {

constexpr int kIntraNodeCost = 1;   // route cost of a hop inside a node
constexpr int kNicCost = 10;        // a hop between a NIC and its leaf
constexpr int kUplinkCost = 20;     // a hop between a leaf and the spine: taken only when needed
constexpr int kSpineGroup = -1;
constexpr int kNoNode = -1;

using EdgeProps = boost::property<boost::edge_index_t, int, boost::property<boost::edge_weight_t, int>>;
using BoostGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property, EdgeProps>;
using Vertex = boost::graph_traits<BoostGraph>::vertex_descriptor;

void check(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

void validate(const TopologySpec& s, int nodes) {
  check(nodes >= 1, "the cluster needs at least one node");
  check(s.gpus_per_node >= 1, "gpus_per_node must be at least 1");
  if (has_gpu_fabric(s.node_kind))
    check(s.nvlink_bps > 0, "an NVLink node needs nvlink_bandwidth above zero");
  check(s.nvls_efficiency == 0 || has_nvswitch(s.node_kind), "nvls_efficiency needs an NVSwitch node");
  check(s.pcie_bps > 0, "pcie_bandwidth must be above zero");
  for (double e : {s.nvlink_efficiency, s.pcie_efficiency, s.nic_efficiency})
    check(e > 0 && e <= 1.5, "efficiencies must be in (0, 1.5]");
  check(s.nvls_efficiency >= 0 && s.nvls_efficiency <= 1.5, "nvls_efficiency must be in [0, 1.5]");
  check(s.gpus_per_pcie_switch >= 1, "gpus_per_pcie_switch must be at least 1");
  check(s.nics_per_node >= 1, "nics_per_node must be at least 1");
  check(s.nics_per_node <= s.gpus_per_node, "nics_per_node cannot exceed gpus_per_node (one NIC per GPU at most)");
  check(s.nic_bps > 0, "nic_bandwidth must be above zero");
  check(s.nodes_per_leaf >= 1, "nodes_per_leaf must be at least 1");
  check(s.oversubscription >= 1.0, "oversubscription must be at least 1 (downlink : uplink)");
}

}  // namespace

struct Topology::Graph {
  BoostGraph g;
  std::vector<Vertex> gpu;           // GPU index → vertex
  std::vector<Vertex> link_source;   // link id → the vertex it leaves
  std::vector<int> group;            // vertex → leaf group (kSpineGroup for the spine)
  std::vector<int> node;             // vertex → node (kNoNode for leaf and spine switches)
  // Scratch for routes_from, reset only where a search touched it.
  mutable std::vector<int> pred;     // vertex → link id it was reached by (−1: none)
  mutable std::vector<int> dist;
  mutable std::vector<boost::default_color_type> color;
  mutable std::vector<Vertex> touched;
  mutable std::vector<char> is_target;
  mutable std::vector<char> target_node;   // node → holds a target of the current search
  mutable std::vector<char> target_group;  // leaf group → holds a target of the current search

  Vertex vertex(int group_id, int node_id) {
    group.push_back(group_id);
    node.push_back(node_id);
    return boost::add_vertex(g);
  }
  /// One link each way between `lower` and `upper` (towards the spine), recorded in `links`.
  void connect(std::vector<Link>& links, Vertex lower, Vertex upper, double bps, LinkKind kind) {
    const int cost = kind == LinkKind::uplink ? kUplinkCost : kind == LinkKind::nic ? kNicCost : kIntraNodeCost;
    for (bool up : {true, false}) {
      const int id = static_cast<int>(links.size());
      links.push_back({bps, kind, up});
      boost::add_edge(up ? lower : upper, up ? upper : lower, EdgeProps(id, cost), g);
      link_source.push_back(up ? lower : upper);
    }
  }
  /// Node n's GPUs and scale-up fabric; returns what each NIC hangs off: the GPU next to it
  /// (NVLink / xGMI nodes) or a PCIe switch.
  std::vector<Vertex> wire_node(const TopologySpec& spec, int n, std::vector<Link>& links) {
    const int k = spec.gpus_per_node, leaf_group = n / spec.nodes_per_leaf;
    const double nvlink = spec.nvlink_bps * spec.nvlink_efficiency, pcie = spec.pcie_bps * spec.pcie_efficiency;
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

void Topology::validate(const TopologySpec& spec, int nodes) { topologies::validate(spec, nodes); }

Topology::~Topology() = default;
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;
std::size_t Topology::num_vertices() const { return boost::num_vertices(g_->g); }

Topology::Topology(const TopologySpec& spec, int nodes) : spec_(spec), nodes_(nodes), g_(std::make_unique<Graph>()) {
  validate(spec, nodes);
  auto& g = g_->g;
  const int k = spec.gpus_per_node;
  const double pcie = spec.pcie_bps * spec.pcie_efficiency;
  const double nic = spec.nic_bps * spec.nic_efficiency;
  const int groups = (nodes + spec.nodes_per_leaf - 1) / spec.nodes_per_leaf;
  const int leaves = spec.rail_optimized ? groups * spec.nics_per_node : groups;
  std::vector<Vertex> leaf(static_cast<std::size_t>(leaves));
  for (std::size_t i = 0; i < leaf.size(); ++i)
    leaf[i] = g_->vertex(spec.rail_optimized ? int(i) / spec.nics_per_node : int(i), kNoNode);
  if (leaves > 1) {
    // One spine vertex stands for the spine layer; each leaf's uplinks are one trunk of
    // (downlinks × NIC rate / oversubscription), i.e. ideal ECMP over the parallel uplinks.
    const Vertex spine = g_->vertex(kSpineGroup, kNoNode);
    const int downlinks = spec.nodes_per_leaf * (spec.rail_optimized ? 1 : spec.nics_per_node);
    for (auto v : leaf) g_->connect(links_, v, spine, downlinks * nic / spec.oversubscription, LinkKind::uplink);
  }
  g_->gpu.resize(static_cast<std::size_t>(nodes) * static_cast<std::size_t>(k));
  for (int n = 0; n < nodes; ++n) {
    const std::vector<Vertex> nic_parent = g_->wire_node(spec, n, links_);
    const int group = n / spec.nodes_per_leaf;
    for (int j = 0; j < spec.nics_per_node; ++j) {
      const Vertex v = g_->vertex(group, n);
      g_->connect(links_, nic_parent[static_cast<std::size_t>(j)], v, pcie, LinkKind::pcie);
      g_->connect(links_, v, leaf[static_cast<std::size_t>(spec.rail_optimized ? group * spec.nics_per_node + j : group)], nic, LinkKind::nic);
    }
  }
  const std::size_t nv = boost::num_vertices(g);
  g_->pred.assign(nv, -1);
  g_->dist.assign(nv, std::numeric_limits<int>::max());
  g_->color.assign(nv, boost::white_color);
  g_->is_target.assign(nv, 0);
  g_->target_node.assign(static_cast<std::size_t>(nodes), 0);
  g_->target_group.assign(static_cast<std::size_t>(groups), 0);
  // Every GPU must reach every other one (it can fail only if a generator above is wrong).
  std::vector<int> all(static_cast<std::size_t>(gpus()));
  for (int i = 0; i < gpus(); ++i) all[static_cast<std::size_t>(i)] = i;
  routes_from(0, all, [](std::size_t, std::span<const int>) {});
}

namespace {

// A* as Boost's breadth_first_visit over a min-priority buffer (lazy deletion), so a search
// costs what it touches rather than the whole graph (a collective routes one search per GPU).
// The heuristic is a consistent lower bound on the cost left: 0 inside a target's node; from
// another node, out through a NIC and back in through one; from a leaf, down a NIC link; plus
// two uplinks when no target hangs off the same leaf group. It keeps a search from flooding
// the fabric or the nodes under a leaf.
class MinQueue {
 public:
  MinQueue(const std::vector<int>* dist, const std::vector<int>* group, const std::vector<int>* node,
           const std::vector<char>* target_node, const std::vector<char>* target_group)
      : dist_(dist), group_(group), node_(node), target_node_(target_node), target_group_(target_group) {}
  void push(Vertex v) { heap_.push({(*dist_)[v] + estimate(v), v, (*dist_)[v]}); }
  Vertex top() { drop_stale(); return heap_.top().second; }
  void pop() { drop_stale(); heap_.pop(); }
  /// Also true once every target is reached: that ends Boost's loop without an exception.
  bool empty() {
    if (done_) return true;
    drop_stale();
    return heap_.empty();
  }
  void finish() { done_ = true; }

 private:
  struct Entry {
    int key;
    Vertex second;  // the vertex
    int dist;       // its distance when pushed: stale once the distance improved
    bool operator>(const Entry& o) const { return key != o.key ? key > o.key : second > o.second; }
  };
  int estimate(Vertex v) const {
    const int n = (*node_)[v], g = (*group_)[v];
    if (n != kNoNode && (*target_node_)[static_cast<std::size_t>(n)]) return 0;
    const int fabric = g == kSpineGroup ? kUplinkCost : (*target_group_)[static_cast<std::size_t>(g)] ? 0 : 2 * kUplinkCost;
    return fabric + (n != kNoNode ? 2 * kNicCost : kNicCost);
  }
  void drop_stale() {
    while (!heap_.empty() && heap_.top().dist != (*dist_)[heap_.top().second]) heap_.pop();
  }
  const std::vector<int>* dist_;
  const std::vector<int>* group_;
  const std::vector<int>* node_;
  const std::vector<char>* target_node_;
  const std::vector<char>* target_group_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_;
  bool done_ = false;
};

class Relax : public boost::default_bfs_visitor {
 public:
  Relax(std::vector<int>* dist, std::vector<int>* pred_edge, std::vector<char>* is_target, std::size_t* left,
        std::vector<Vertex>* touched, MinQueue* queue)
      : dist_(dist), pred_edge_(pred_edge), is_target_(is_target), left_(left), touched_(touched), queue_(queue) {}
  void discover_vertex(Vertex v, const BoostGraph&) const { touched_->push_back(v); }
  void examine_vertex(Vertex v, const BoostGraph&) const {
    if ((*is_target_)[v]) {
      (*is_target_)[v] = 0;
      if (--*left_ == 0) queue_->finish();
    }
  }
  void tree_edge(boost::graph_traits<BoostGraph>::edge_descriptor e, const BoostGraph& g) const { relax(e, g); }
  void gray_target(boost::graph_traits<BoostGraph>::edge_descriptor e, const BoostGraph& g) const {
    if (relax(e, g)) queue_->push(boost::target(e, g));
  }

 private:
  bool relax(boost::graph_traits<BoostGraph>::edge_descriptor e, const BoostGraph& g) const {
    const Vertex u = boost::source(e, g), v = boost::target(e, g);
    const int d = (*dist_)[u] + boost::get(boost::edge_weight, g, e);
    if (d >= (*dist_)[v]) return false;
    (*dist_)[v] = d;
    (*pred_edge_)[v] = boost::get(boost::edge_index, g, e);
    return true;
  }
  std::vector<int>* dist_;
  std::vector<int>* pred_edge_;
  std::vector<char>* is_target_;
  std::size_t* left_;
  std::vector<Vertex>* touched_;
  MinQueue* queue_;
};

}  // namespace

void Topology::routes_from(int src, std::span<const int> dsts,
                           const std::function<void(std::size_t, std::span<const int>)>& visit) const {
  auto& G = *g_;
  check(src >= 0 && src < gpus(), "route from a GPU outside the topology");
  for (int d : dsts) check(d >= 0 && d < gpus(), "route to a GPU outside the topology");
  std::vector<char>& is_target = G.is_target;  // all zero between calls
  std::size_t left = 0;
  for (int d : dsts) {
    const Vertex v = G.gpu[static_cast<std::size_t>(d)];
    if (!is_target[v]) ++left, is_target[v] = 1;
    G.target_node[static_cast<std::size_t>(G.node[v])] = 1;
    G.target_group[static_cast<std::size_t>(G.group[v])] = 1;
  }
  const Vertex s = G.gpu[static_cast<std::size_t>(src)];
  G.touched.clear();
  G.dist[s] = 0;
  if (left > 0) {
    MinQueue queue(&G.dist, &G.group, &G.node, &G.target_node, &G.target_group);
    auto index = boost::get(boost::vertex_index, G.g);
    boost::breadth_first_visit(G.g, s, queue, Relax(&G.dist, &G.pred, &is_target, &left, &G.touched, &queue),
                               boost::make_iterator_property_map(G.color.begin(), index));
  }
  std::vector<int> route;
  bool unreachable = left > 0;
  for (std::size_t i = 0; i < dsts.size() && !unreachable; ++i) {
    route.clear();
    for (Vertex v = G.gpu[static_cast<std::size_t>(dsts[i])]; v != s;) {
      const int e = G.pred[v];
      if (e < 0) { unreachable = true; break; }
      route.push_back(e);
      v = G.link_source[static_cast<std::size_t>(e)];
    }
    if (unreachable) break;
    std::reverse(route.begin(), route.end());
    visit(i, route);
  }
  G.touched.push_back(s);
  for (Vertex v : G.touched) {
    G.pred[v] = -1;
    G.dist[v] = std::numeric_limits<int>::max();
    G.color[v] = boost::white_color;
  }
  for (int d : dsts) {
    const Vertex v = G.gpu[static_cast<std::size_t>(d)];
    is_target[v] = 0;
    G.target_node[static_cast<std::size_t>(G.node[v])] = 0;
    G.target_group[static_cast<std::size_t>(G.group[v])] = 0;
  }
  check(!unreachable, "the topology is disconnected: GPU " + std::to_string(src) + " cannot reach every GPU it must");
}

}  // namespace clustersim::topologies
