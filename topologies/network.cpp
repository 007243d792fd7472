#include "topologies/network.hpp"

#include <array>
#include <stdexcept>

namespace clustersim::topologies {

Network::Network(const TopologySpec& spec, int nodes, Layout layout, AlgorithmChoice choice, PlanCache* cache)
    : spec_(spec), nodes_(nodes), layout_(layout), choice_(choice), cache_(cache ? cache : &PlanCache::shared()),
      mutex_(std::make_unique<std::mutex>()) {
  Topology::validate(spec, nodes);
  if (layout.ranks() > nodes * spec.gpus_per_node)
    throw std::invalid_argument("the layout has more ranks than the topology has GPUs");
}

Network::Network(Network&&) noexcept = default;
Network::~Network() {
  if (cache_) cache_->give_topology(std::move(topo_));
}

const Topology& Network::topology() const {
  std::lock_guard lock(*mutex_);
  if (!topo_) topo_ = cache_->take_topology(spec_, nodes_);
  return *topo_;
}

int Network::nodes_for(const TopologySpec& spec, int gpus) {
  return (gpus + spec.gpus_per_node - 1) / spec.gpus_per_node;
}

// A plan depends on the layout only through the communicators of `dim` (groups_of), i.e. the
// stride between members, the group size and the rank count. Layouts that agree on these (TP
// groups of every plan with the same tp; DP groups of (tp 8, pp 2) and (tp 8, cp 2)) share one
// cached plan: the key holds the layout with `dim`'s stride on the innermost other dimension,
// the rest outside `dim`.
Layout plan_layout(const Layout& l, GroupDim dim) {
  if (folded(dim)) return l;  // expert groups are renumbered over a whole stage: no sharing
  Layout out;
  std::size_t slot = 0;
  for (std::size_t d = 0; d < kPlacedDims; ++d) {
    if (static_cast<GroupDim>(d) == dim) continue;
    out.order[slot == 0 ? 0 : slot + 1] = static_cast<GroupDim>(d);
    ++slot;
  }
  out.order[1] = dim;
  out.sizes.fill(1);
  const int stride = l.stride(dim), size = l.size(dim);
  out.sizes[index(out.order[0])] = stride;
  out.sizes[index(dim)] = size;
  out.sizes[index(out.order[2])] = l.ranks() / (stride * size);
  return out;
}

const Plan& Network::plan(Collective c, GroupDim dim, Algorithm a, const std::vector<int>& members) const {
  auto key = std::make_tuple(int(c), int(dim), int(a), members);
  std::unique_lock lock(*mutex_);
  auto it = plans_.find(key);
  if (it != plans_.end()) return *it->second;
  const PlanCache::Key cache_key{spec_, nodes_, plan_layout(layout_, dim), dim, c, a, members};
  auto plan = cache_->get(cache_key, [this]() -> const Topology& {
    if (!topo_) topo_ = cache_->take_topology(spec_, nodes_);  // under the lock held by plan()
    return *topo_;
  });
  return *plans_.emplace(std::move(key), std::move(plan)).first->second;
}

units::Seconds Network::host_copy_time(units::Bytes bytes) const {
  const double link = spec_.host_link_bandwidth.si() > 0 ? spec_.host_link_bandwidth.si() : spec_.pcie_bandwidth.si();
  return units::Seconds(bytes.si() / (link * spec_.pcie_efficiency));
}

bool Network::spans_nodes(GroupDim dim, const std::vector<int>& members) const {
  // Groups are rank ranges base + i·stride and rank r runs on GPU r, so the group at base 0
  // tells (every group has the same node pattern when the node size divides the strides, and
  // the first group is the representative one otherwise, as in the step model).
  const int stride = layout_.stride(dim);
  const int first = members.empty() ? 0 : members.front(), last = members.empty() ? layout_.size(dim) - 1 : members.back();
  for (int m : members)
    if (node_of(m * stride) != node_of(first * stride)) return true;
  return node_of(first * stride) != node_of(last * stride);
}

CollectiveTime Network::cost(Collective c, GroupDim dim, units::Bytes bytes, const std::vector<int>& members) const {
  CollectiveTime t = fastest(c, dim, bytes, members);
  t.op = c;
  t.group = dim;
  return t;
}

CollectiveTime Network::fastest(Collective c, GroupDim dim, units::Bytes bytes, const std::vector<int>& members) const {
  if (c == Collective::all_to_all || c == Collective::send_recv)
    return time_of(plan(c, dim, Algorithm::direct, members), bytes);
  if (c != Collective::all_reduce)  // reduce-scatter, all-gather: NCCL's ring unless forced hierarchical
    return time_of(plan(c, dim, choice_ == AlgorithmChoice::hierarchical ? Algorithm::hierarchical : Algorithm::ring, members),
                   bytes);
  const bool multi_node = spans_nodes(dim, members);
  const int ranks = members.empty() ? layout_.size(dim) : int(members.size());
  const bool nvls_applies = !multi_node && spec_.nvls_efficiency > 0 && has_nvswitch(spec_.node_kind) &&
                            ranks >= kNvlsMinRanks;
  switch (choice_) {
    case AlgorithmChoice::ring: return time_of(plan(c, dim, Algorithm::ring, members), bytes);
    case AlgorithmChoice::tree: return time_of(plan(c, dim, Algorithm::tree, members), bytes);
    case AlgorithmChoice::hierarchical: return time_of(plan(c, dim, Algorithm::hierarchical, members), bytes);
    case AlgorithmChoice::nvls:  // where NVLS cannot serve the group, NCCL's own choice
      if (nvls_applies) return time_of(plan(c, dim, Algorithm::nvls, members), bytes);
      break;
    case AlgorithmChoice::automatic: break;
  }
  // NCCL's default: the fastest of its native algorithms for this size (tuning.cc); the
  // double binary tree only spans nodes, NVLS only serves a group inside one NVSwitch node.
  CollectiveTime best = time_of(plan(c, dim, Algorithm::ring, members), bytes);
  if (multi_node) {
    const CollectiveTime tree = time_of(plan(c, dim, Algorithm::tree, members), bytes);
    if (tree.time < best.time) best = tree;
  } else if (nvls_applies) {
    const CollectiveTime nvls = time_of(plan(c, dim, Algorithm::nvls, members), bytes);
    if (nvls.time < best.time) best = nvls;
  }
  return best;
}

sim::TaskId append_collective(sim::TaskGraph& graph, const CollectiveTime& t, std::int32_t stream,
                              std::span<const sim::TaskId> deps, std::int32_t link_resource_base,
                              std::span<const sim::ResourceUse> extra_uses, std::int32_t priority, std::int32_t tag) {
  sim::TaskId last = -1;
  if (t.phases.empty())  // nothing to move: a zero-work marker keeps the dependency chain
    return graph.add(stream, sim::Time{}, deps, {}, priority, tag);
  if (extra_uses.size() > kMaxExtraUses) throw std::invalid_argument("append_collective: too many extra resource uses");
  std::array<sim::ResourceUse, kMaxExtraUses + kLinkClasses> uses;  // no allocation per phase
  for (const PhaseTime& ph : t.phases) {
    std::size_t n = 0;
    for (const auto& u : extra_uses) uses[n++] = u;
    for (std::size_t c = 0; c < ph.demand.size(); ++c)
      if (ph.demand[c] > 0) uses[n++] = {link_resource_base + std::int32_t(c), ph.demand[c]};
    const sim::TaskId prev[] = {last};
    last = graph.add(stream, sim::Time::from_seconds(ph.time.si()),
                     last >= 0 ? std::span<const sim::TaskId>(prev) : std::span<const sim::TaskId>(deps),
                     std::span<const sim::ResourceUse>(uses.data(), n), priority, tag);
  }
  return last;
}

}  // namespace clustersim::topologies
