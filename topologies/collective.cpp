#include "topologies/collective.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "topologies/component_shapes.hpp"
#include "topologies/placement.hpp"

namespace clustersim::topologies {

const char* name(Collective c) {
  switch (c) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::all_gather: return "all_gather";
    case Collective::all_to_all: return "all_to_all";
    case Collective::send_recv: return "send_recv";
  }
  return "?";
}

const char* name(Algorithm a) {
  switch (a) {
    case Algorithm::ring: return "ring";
    case Algorithm::tree: return "tree";
    case Algorithm::hierarchical: return "hierarchical";
    case Algorithm::direct: return "direct";
    case Algorithm::nvls: return "nvls";
  }
  return "?";
}

double bus_factor(Collective c, int n) {
  if (n <= 1) return 0.0;
  const double k = double(n - 1) / n;
  switch (c) {
    case Collective::all_reduce: return 2 * k;
    case Collective::send_recv: return 1.0;
    default: return k;
  }
}

namespace {

using Protos = std::array<double, 3>;

/// Point-to-point flows of one phase, grouped by source GPU; bytes are per byte of S.
class Flows {
 public:
  explicit Flows(const Topology& t) : topo_(t), out_(static_cast<std::size_t>(t.gpus())) {}
  /// A flow to another node first moves over NVLink to the GPU on the destination's rail, which
  /// sends through its own NIC (NCCL's PXN, on by default since NCCL 2.12), so a ring channel
  /// stays on one rail.
  void add(int src, int dst, double bytes) {
    if (src == dst || bytes <= 0) return;
    const int k = topo_.gpus_per_node();
    const int proxy = topo_.node_of(src) * k + dst % k;
    if (topo_.has_nvlink() && topo_.node_of(src) != topo_.node_of(dst) && proxy != src) {
      out_[static_cast<std::size_t>(src)].push_back({proxy, bytes});
      src = proxy;
    }
    out_[static_cast<std::size_t>(src)].push_back({dst, bytes});
  }
  /// Routes every flow and returns the busiest link per class, in seconds per byte of S.
  Phase load(const Protos& latency_s, const Protos& bw_fraction) const {
    std::vector<double> bytes(topo_.links().size(), 0.0);
    std::vector<int> dsts;
    for (std::size_t s = 0; s < out_.size(); ++s) {
      if (out_[s].empty()) continue;
      dsts.clear();
      for (const auto& f : out_[s]) dsts.push_back(f.dst);
      topo_.routes_from(int(s), dsts, [&](std::size_t i, std::span<const int> route) {
        for (int e : route) bytes[static_cast<std::size_t>(e)] += out_[s][i].bytes;
      });
    }
    Phase p;
    p.latency_s = latency_s;
    p.bw_fraction = bw_fraction;
    std::array<double, kLinkClasses> worst{};
    for (std::size_t e = 0; e < bytes.size(); ++e) {
      const Link& l = topo_.links()[e];
      const double s = bytes[e] / l.bps;
      auto& w = worst[static_cast<std::size_t>(l.link_class())];
      w = std::max(w, s);
      p.s_per_byte = std::max(p.s_per_byte, s);
    }
    if (p.s_per_byte > 0)
      for (std::size_t c = 0; c < worst.size(); ++c) p.class_share[c] = worst[c] / p.s_per_byte;
    return p;
  }

 private:
  struct Flow {
    int dst;
    double bytes;
  };
  const Topology& topo_;
  std::vector<std::vector<Flow>> out_;
};

/// A group's ranks split by node, nodes in order of first appearance, ranks in group order.
std::vector<std::vector<int>> by_node(const Topology& t, const std::vector<int>& group) {
  std::vector<std::vector<int>> out;
  std::vector<int> node_ids;
  for (int gpu : group) {
    const int n = t.node_of(gpu);
    auto it = std::find(node_ids.begin(), node_ids.end(), n);
    if (it == node_ids.end()) {
      node_ids.push_back(n);
      out.push_back({gpu});
    } else {
      out[static_cast<std::size_t>(it - node_ids.begin())].push_back(gpu);
    }
  }
  return out;
}

struct Shape {
  int ranks = 0, nodes = 0, per_node = 0;
};
Shape shape_of(const Topology& t, const std::vector<int>& group) {
  const auto nodes = by_node(t, group);
  Shape s{int(group.size()), int(nodes.size()), 0};
  for (const auto& n : nodes) s.per_node = std::max(s.per_node, int(n.size()));
  return s;
}

HopKind intra_hop(const Topology& t) { return t.has_nvlink() ? HopKind::nvlink : HopKind::pci; }

// NCCL tuning.cc ring latency: base + (nsteps − nInterSteps)·intra + nInterSteps·inter, with
// nsteps = passes·(n−1) and nInterSteps = passes·(nNodes−1) (hardware.md §3.8).
Protos ring_latency(const Topology& t, const Shape& s, int passes) {
  Protos out{};
  const double steps = passes * double(s.ranks - 1), inter = passes * double(s.nodes - 1);
  for (Protocol p : kProtocols)
    out[static_cast<std::size_t>(p)] = base_latency_s(kRingLatency, p) +
                                       (steps - inter) * hop_latency_s(kRingLatency, intra_hop(t), p) +
                                       inter * hop_latency_s(kRingLatency, HopKind::net, p);
  return out;
}

// NCCL tuning.cc tree latency: base + 2·((ranksPerNode−1)·intra + log2(nNodes)·inter).
Protos tree_latency(const Topology& t, const Shape& s) {
  Protos out{};
  for (Protocol p : kProtocols)
    out[static_cast<std::size_t>(p)] =
        base_latency_s(kTreeLatency, p) + 2 * ((s.per_node - 1) * hop_latency_s(kTreeLatency, intra_hop(t), p) +
                                               std::log2(double(s.nodes)) * hop_latency_s(kTreeLatency, HopKind::net, p));
  return out;
}

// Point-to-point: one base latency and one hop of the slowest kind crossed.
Protos p2p_latency(const Topology& t, const Shape& s) {
  Protos out{};
  const HopKind h = s.nodes > 1 ? HopKind::net : intra_hop(t);
  for (Protocol p : kProtocols)
    out[static_cast<std::size_t>(p)] = base_latency_s(kRingLatency, p) + hop_latency_s(kRingLatency, h, p);
  return out;
}

Protos ring_fractions() {
  Protos f{};
  for (Protocol p : kProtocols) f[static_cast<std::size_t>(p)] = ring_protocol_bw_fraction(p);
  return f;
}
Protos tree_fractions() {
  Protos f{};
  for (Protocol p : kProtocols) f[static_cast<std::size_t>(p)] = tree_protocol_bw_fraction(p) * kTreeAllReduceBwFraction;
  return f;
}

// NCCL builds one ring per channel; with r of the group's ranks in each node it uses r
// channels, channel c entering every node at its c-th rank (so each channel leaves through a
// different GPU's NIC: one ring per rail). Every ring edge carries `edge_bytes` / channels.
void add_rings(Flows& f, const std::vector<std::vector<int>>& nodes, double edge_bytes) {
  const std::size_t channels = std::max<std::size_t>(1, nodes.front().size());
  std::vector<int> order;
  for (std::size_t c = 0; c < channels; ++c) {
    order.clear();
    for (const auto& local : nodes)
      for (std::size_t i = 0; i < local.size(); ++i) order.push_back(local[(c + i) % local.size()]);
    for (std::size_t i = 0; i < order.size(); ++i)
      f.add(order[i], order[(i + 1) % order.size()], edge_bytes / double(channels));
  }
}

// Ring traffic of a group inside one node. On a full mesh (AMD xGMI) RCCL runs its channels
// over different peer links, so each rank's ring traffic spreads evenly over its links to the
// group's other ranks: 8 × MI300X reach 7 links' worth of busbw (hardware.md §3.6: 312.9 GB/s
// = 70 % of 448). Elsewhere, NCCL's rings.
void add_local_rings(Flows& f, const Topology& t, const std::vector<std::vector<int>>& nodes, double edge_bytes) {
  if (t.spec().node_kind != NodeKind::full_mesh || nodes.size() != 1 || nodes.front().size() < 3)
    return add_rings(f, nodes, edge_bytes);
  const auto& g = nodes.front();
  for (int a : g)
    for (int b : g) f.add(a, b, edge_bytes / double(g.size() - 1));
}

// NCCL's binary tree over positions 0..n−1 (trees.cc): the parent of p > 0 clears p's lowest
// set bit b and sets the next one, or just clears b when that falls outside; odd positions are
// leaves. Returns parent[p] (−1 for the root, position 0).
std::vector<int> binary_tree(int n) {
  std::vector<int> parent(static_cast<std::size_t>(n), -1);
  for (int p = 1; p < n; ++p) {
    const int b = p & -p;
    const int up = (p ^ b) | (b << 1);
    parent[static_cast<std::size_t>(p)] = up < n ? up : (p ^ b);
  }
  return parent;
}

// Double binary tree (NCCL trees.cc): the second tree is the first mirrored (n even) or shifted
// by one (n odd), so a node inner in one tree is a leaf in the other. Each tree carries half the
// data, reduced up then broadcast down, so every tree edge moves half of S each way; inside a
// node the ranks form a chain used by both trees.
void add_double_tree(Flows& f, const std::vector<std::vector<int>>& nodes) {
  const int n = int(nodes.size());
  const std::vector<int> parents = binary_tree(n);
  auto relabel = [n](int tree, int p) { return tree == 0 ? p : n % 2 == 0 ? n - 1 - p : (p + 1) % n; };
  const std::size_t channels = std::max<std::size_t>(1, nodes.front().size());
  const double half = 0.5 / double(channels);
  for (std::size_t c = 0; c < channels; ++c) {
    auto head = [&](int pos) {
      const auto& local = nodes[static_cast<std::size_t>(pos)];
      return local[c % local.size()];
    };
    for (const auto& local : nodes)
      for (std::size_t i = 0; i + 1 < local.size(); ++i) {
        const int a = local[(c + i) % local.size()], b = local[(c + i + 1) % local.size()];
        f.add(a, b, 2 * half);
        f.add(b, a, 2 * half);
      }
    for (int tree = 0; tree < 2; ++tree)
      for (int pos = 1; pos < n; ++pos) {
        const int child = relabel(tree, pos), parent = relabel(tree, parents[static_cast<std::size_t>(pos)]);
        f.add(head(child), head(parent), half);
        f.add(head(parent), head(child), half);
      }
  }
}

// All-reduce: reduce-scatter inside each node, all-reduce of 1/r of S across nodes per local
// rank (one ring per rail), all-gather inside each node. Reduce-scatter: the first two steps
// with a reduce-scatter across nodes; all-gather: the mirror image.
std::vector<Phase> hierarchical_phases(const Topology& topo, const std::vector<std::vector<int>>& groups,
                                       Collective op, const Shape& s) {
  const bool all_reduce = op == Collective::all_reduce;
  const double r = s.per_node;
  const int passes = all_reduce ? 2 : 1;
  const Shape intra{s.per_node, 1, s.per_node}, inter{s.nodes, s.nodes, 1};
  Flows f(topo), across(topo);
  for (const auto& g : groups) {
    const auto nodes = by_node(topo, g);
    for (const auto& local : nodes) add_local_rings(f, topo, {local}, (r - 1) / r);
    for (std::size_t j = 0; j < nodes.front().size(); ++j) {
      std::vector<std::vector<int>> rail;
      for (const auto& local : nodes) rail.push_back({local[j % local.size()]});
      add_rings(across, rail, passes * (s.nodes - 1.0) / s.nodes / r);
    }
  }
  const Phase intra_phase = f.load(ring_latency(topo, intra, 1), ring_fractions());
  const Phase inter_phase = across.load(ring_latency(topo, inter, passes), ring_fractions());
  if (all_reduce) return {intra_phase, inter_phase, intra_phase};
  if (op == Collective::reduce_scatter) return {intra_phase, inter_phase};
  return {inter_phase, intra_phase};
}

// NVLink SHARP: each GPU sends its buffer into the NVSwitch once, which reduces it and
// multicasts the result, so each NVLink carries S each way (spread here over the peers); the
// rate reached is nvls_efficiency of the NVLink spec instead of the ring's share.
Phase nvls_phase(const Topology& topo, const std::vector<std::vector<int>>& groups, const Shape& s) {
  const TopologySpec& spec = topo.spec();
  if (s.nodes != 1 || spec.nvls_efficiency <= 0 || !has_nvswitch(spec.node_kind))
    throw std::invalid_argument("nvls needs the group inside one NVSwitch node with an nvls_efficiency");
  Flows f(topo);
  const double n = s.ranks;
  for (const auto& g : groups)
    for (int a : g)
      for (int b : g) f.add(a, b, 1.0 / (n - 1));
  Protos latency{}, fraction{};
  latency.fill(std::numeric_limits<double>::infinity());  // NVLS runs the Simple protocol only
  latency[static_cast<std::size_t>(Protocol::simple)] = kNvlsLatency.base_s[2] + kNvlsLatency.hop_s[0][2];
  fraction.fill(spec.nvls_efficiency / spec.nvlink_efficiency);
  return f.load(latency, fraction);
}

}  // namespace

Plan make_plan(const Topology& topo, const std::vector<std::vector<int>>& all_groups, Collective op, Algorithm alg) {
  if (all_groups.empty() || all_groups.front().empty())
    throw std::invalid_argument("a collective needs at least one rank");
  const std::vector<std::vector<int>> groups = one_component_per_shape(topo, all_groups);
  Plan plan;
  plan.op = op;
  plan.algorithm = alg;
  const Shape s = shape_of(topo, groups.front());
  plan.ranks = s.ranks;
  if (s.ranks <= 1) return plan;
  const bool all_reduce = op == Collective::all_reduce;
  const bool ring_family = all_reduce || op == Collective::reduce_scatter || op == Collective::all_gather;
  if (alg == Algorithm::hierarchical && !ring_family)
    throw std::invalid_argument("hierarchical applies to all_reduce, reduce_scatter and all_gather");
  if ((alg == Algorithm::tree || alg == Algorithm::nvls) && !all_reduce)
    throw std::invalid_argument(std::string(name(alg)) + " applies to all_reduce only");
  if (alg == Algorithm::direct && all_reduce) throw std::invalid_argument("direct applies to all_to_all and send_recv");
  if (alg == Algorithm::hierarchical && (s.nodes == 1 || s.per_node == 1)) plan.algorithm = alg = Algorithm::ring;
  const double n = s.ranks;
  Flows f(topo);
  switch (alg) {
    case Algorithm::ring: {
      if (op == Collective::all_to_all || op == Collective::send_recv)
        throw std::invalid_argument("ring applies to all_reduce, reduce_scatter and all_gather");
      const int passes = all_reduce ? 2 : 1;
      for (const auto& g : groups) add_local_rings(f, topo, by_node(topo, g), passes * (n - 1) / n);
      plan.phases.push_back(f.load(ring_latency(topo, s, passes), ring_fractions()));
      break;
    }
    case Algorithm::tree:
      for (const auto& g : groups) add_double_tree(f, by_node(topo, g));
      plan.phases.push_back(f.load(tree_latency(topo, s), tree_fractions()));
      break;
    case Algorithm::hierarchical: plan.phases = hierarchical_phases(topo, groups, op, s); break;
    case Algorithm::nvls: plan.phases.push_back(nvls_phase(topo, groups, s)); break;
    case Algorithm::direct:
      for (const auto& g : groups) {
        if (op == Collective::all_to_all) {
          for (int a : g)
            for (int b : g) f.add(a, b, 1.0 / n);
        } else {
          for (std::size_t i = 0; i + 1 < g.size(); ++i) f.add(g[i], g[i + 1], 1.0);
        }
      }
      plan.phases.push_back(f.load(p2p_latency(topo, s), ring_fractions()));
      break;
  }
  return plan;
}

CollectiveTime share_of(const CollectiveTime& c, double f) {
  CollectiveTime out = c;
  out.time = c.time * f;
  for (PhaseTime& ph : out.phases) ph.time = ph.time * f, ph.transfer = ph.transfer * f;
  return out;
}

CollectiveTime paced(const CollectiveTime& c, units::Seconds at_least) {
  if (c.time.si() <= 0 || at_least.si() <= c.time.si()) return c;
  const double f = at_least.si() / c.time.si();
  CollectiveTime out = share_of(c, f);
  for (PhaseTime& ph : out.phases)
    for (double& d : ph.demand) d /= f;
  return out;
}

CollectiveTime time_of(const Plan& plan, units::Bytes bytes) {
  using units::Seconds;
  CollectiveTime best;
  best.algorithm = plan.algorithm;
  if (plan.ranks <= 1 || bytes.si() <= 0 || plan.phases.empty()) return best;
  best.time = Seconds(-1);
  for (Protocol p : kProtocols) {
    const auto i = static_cast<std::size_t>(p);
    CollectiveTime t;
    t.algorithm = plan.algorithm;
    t.protocol = p;
    for (const Phase& ph : plan.phases) {
      PhaseTime pt;
      pt.transfer = Seconds(bytes.si() * ph.s_per_byte / ph.bw_fraction[i]);
      pt.time = Seconds(ph.latency_s[i]) + pt.transfer + Seconds(t.phases.empty() ? kCollectiveLaunchOverhead_s : 0.0);
      for (std::size_t c = 0; c < pt.demand.size(); ++c)
        pt.demand[c] = pt.time.si() > 0 ? ph.class_share[c] * pt.transfer.si() / pt.time.si() : 0.0;
      t.time += pt.time;
      t.phases.push_back(pt);
    }
    if (best.time.si() < 0 || t.time < best.time) best = t;
  }
  return best;
}

std::vector<std::vector<int>> member_groups(const Layout& layout, GroupDim dim, const std::vector<int>& members) {
  std::vector<std::vector<int>> groups = groups_of(layout, dim);
  if (members.empty()) return groups;
  for (auto& g : groups) {
    std::vector<int> picked;
    for (int m : members) {
      if (m < 0 || m >= int(g.size())) throw std::invalid_argument("a member rank lies outside its group");
      picked.push_back(g[static_cast<std::size_t>(m)]);
    }
    g = std::move(picked);
  }
  return groups;
}

namespace {

template <class T>
void mix(std::size_t& h, const T& v) {
  h ^= std::hash<T>{}(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
}

}  // namespace

struct PlanCache::Impl {
  struct KeyHash {
    std::size_t operator()(const PlanCache::Key& k) const {
      const TopologySpec& t = k.spec;
      std::size_t h = 0;
      mix(h, int(t.node_kind)), mix(h, t.gpus_per_node), mix(h, t.nvlink_bandwidth.si()), mix(h, t.nvlink_efficiency);
      mix(h, t.nvls_efficiency), mix(h, t.pcie_bandwidth.si()), mix(h, t.pcie_efficiency),
          mix(h, t.gpus_per_pcie_switch);
      mix(h, t.nics_per_node), mix(h, t.nic_bandwidth.si()), mix(h, t.nic_efficiency), mix(h, t.nodes_per_leaf);
      mix(h, t.oversubscription), mix(h, t.rail_optimized), mix(h, k.nodes);
      for (std::size_t d = 0; d < kPlacedDims; ++d) mix(h, int(k.layout.order[d]));
      for (std::size_t d = 0; d < kGroupDims; ++d) mix(h, k.layout.sizes[d]);
      mix(h, int(k.dim)), mix(h, int(k.op)), mix(h, int(k.algorithm));
      for (int m : k.members) mix(h, m);
      return h;
    }
  };
  static constexpr std::size_t kMaxPlans = 100000;  // bounded: a long sweep over many layouts
  static constexpr std::size_t kMaxIdleTopologies = 4;
  std::mutex mutex;
  std::unordered_map<Key, std::shared_ptr<const Plan>, KeyHash> plans;
  std::deque<std::unique_ptr<Topology>> idle;  // oldest first
};

PlanCache::PlanCache() : impl_(std::make_unique<Impl>()) {}
PlanCache::~PlanCache() = default;

PlanCache& PlanCache::shared() {
  static PlanCache cache;
  return cache;
}

std::unique_ptr<Topology> PlanCache::take_topology(const TopologySpec& spec, int nodes) {
  {
    std::lock_guard lock(impl_->mutex);
    for (auto it = impl_->idle.begin(); it != impl_->idle.end(); ++it)
      if ((*it)->nodes() == nodes && (*it)->spec() == spec) {
        std::unique_ptr<Topology> t = std::move(*it);
        impl_->idle.erase(it);
        return t;
      }
  }
  return std::make_unique<Topology>(spec, nodes);
}

void PlanCache::give_topology(std::unique_ptr<Topology> t) {
  if (!t) return;
  std::unique_ptr<Topology> dropped;  // destroyed after the lock is released
  std::lock_guard lock(impl_->mutex);
  impl_->idle.push_back(std::move(t));
  if (impl_->idle.size() > Impl::kMaxIdleTopologies) dropped = std::move(impl_->idle.front()), impl_->idle.pop_front();
}

std::shared_ptr<const Plan> PlanCache::get(const Key& key, const std::function<const Topology&()>& topology) {
  {
    std::lock_guard lock(impl_->mutex);
    if (auto it = impl_->plans.find(key); it != impl_->plans.end()) return it->second;
  }
  // Routed outside the lock: two threads may both route a missing plan; the first one stored wins.
  auto plan = std::make_shared<const Plan>(
      make_plan(topology(), member_groups(key.layout, key.dim, key.members), key.op, key.algorithm));
  std::lock_guard lock(impl_->mutex);
  if (impl_->plans.size() >= Impl::kMaxPlans) impl_->plans.clear();
  return impl_->plans.emplace(key, std::move(plan)).first->second;
}

}  // namespace clustersim::topologies
