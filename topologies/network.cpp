#include "topologies/network.hpp"

#include <array>
#include <stdexcept>

namespace clustersim::topologies {

Network::Network(const TopologySpec& spec, int nodes, Layout layout, AlgorithmChoice choice)
    : spec_(spec), nodes_(nodes), layout_(layout), choice_(choice) {
  Topology::validate(spec, nodes);
  if (layout.ranks() > nodes * spec.gpus_per_node)
    throw std::invalid_argument("the layout has more ranks than the topology has GPUs");
}

const Topology& Network::topology() const {
  if (!topo_) topo_ = std::make_unique<Topology>(spec_, nodes_);
  return *topo_;
}

int Network::nodes_for(const TopologySpec& spec, int gpus) {
  return (gpus + spec.gpus_per_node - 1) / spec.gpus_per_node;
}

const Plan& Network::plan(Collective c, GroupDim dim, Algorithm a) const {
  const auto key = std::make_tuple(int(c), int(dim), int(a));
  auto it = plans_.find(key);
  if (it != plans_.end()) return *it->second;
  auto plan = shared_plan(spec_, nodes_, layout_, dim, c, a, [this]() -> const Topology& { return topology(); });
  return *plans_.emplace(key, std::move(plan)).first->second;
}

CollectiveTime Network::cost(Collective c, GroupDim dim, double bytes) const {
  if (c == Collective::all_to_all || c == Collective::send_recv) return time_of(plan(c, dim, Algorithm::direct), bytes);
  if (c != Collective::all_reduce)  // reduce-scatter, all-gather: NCCL's ring unless forced hierarchical
    return time_of(plan(c, dim, choice_ == AlgorithmChoice::hierarchical ? Algorithm::hierarchical : Algorithm::ring), bytes);
  // Groups are rank ranges base + i·stride, so the first and last rank tell whether one spans nodes.
  const int first = 0, last = layout_.ranks() > 0 ? layout_.size(dim) - 1 : 0;
  int stride = 1;
  for (GroupDim inner : layout_.order) {
    if (inner == dim) break;
    stride *= layout_.size(inner);
  }
  const bool multi_node = node_of(first) != node_of(last * stride);
  const bool nvls_applies = !multi_node && spec_.nvls_efficiency > 0 && spec_.node_kind != NodeKind::pcie &&
                            layout_.size(dim) >= kNvlsMinRanks;
  switch (choice_) {
    case AlgorithmChoice::ring: return time_of(plan(c, dim, Algorithm::ring), bytes);
    case AlgorithmChoice::tree: return time_of(plan(c, dim, Algorithm::tree), bytes);
    case AlgorithmChoice::hierarchical: return time_of(plan(c, dim, Algorithm::hierarchical), bytes);
    case AlgorithmChoice::nvls:  // where NVLS cannot serve the group, NCCL's own choice
      if (nvls_applies) return time_of(plan(c, dim, Algorithm::nvls), bytes);
      break;
    case AlgorithmChoice::automatic: break;
  }
  // NCCL's default: the fastest of its native algorithms for this size (tuning.cc); the
  // double binary tree only spans nodes, NVLS only serves a group inside one NVSwitch node.
  CollectiveTime best = time_of(plan(c, dim, Algorithm::ring), bytes);
  if (multi_node) {
    const CollectiveTime tree = time_of(plan(c, dim, Algorithm::tree), bytes);
    if (tree.time_s < best.time_s) best = tree;
  } else if (nvls_applies) {
    const CollectiveTime nvls = time_of(plan(c, dim, Algorithm::nvls), bytes);
    if (nvls.time_s < best.time_s) best = nvls;
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
    last = graph.add(stream, sim::Time::from_seconds(ph.time_s),
                     last >= 0 ? std::span<const sim::TaskId>(prev) : std::span<const sim::TaskId>(deps),
                     std::span<const sim::ResourceUse>(uses.data(), n), priority, tag);
  }
  return last;
}

}  // namespace clustersim::topologies
