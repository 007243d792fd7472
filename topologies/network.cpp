#include "topologies/network.hpp"

#include <stdexcept>

namespace clustersim::topologies {

Network::Network(const TopologySpec& spec, int nodes, Layout layout, AlgorithmChoice choice)
    : topo_(spec, nodes), layout_(layout), choice_(choice) {
  if (layout.ranks() > topo_.gpus())
    throw std::invalid_argument("the layout has more ranks than the topology has GPUs");
}

int Network::nodes_for(const TopologySpec& spec, int gpus) {
  return (gpus + spec.gpus_per_node - 1) / spec.gpus_per_node;
}

const Plan& Network::plan(Collective c, GroupDim dim, Algorithm a) const {
  const auto key = std::make_tuple(int(c), int(dim), int(a));
  auto it = plans_.find(key);
  if (it == plans_.end()) it = plans_.emplace(key, make_plan(topo_, groups_of(layout_, dim), c, a)).first;
  return it->second;
}

CollectiveTime Network::cost(Collective c, GroupDim dim, double bytes) const {
  if (c == Collective::all_to_all || c == Collective::send_recv) return time_of(plan(c, dim, Algorithm::direct), bytes);
  if (c != Collective::all_reduce) return time_of(plan(c, dim, Algorithm::ring), bytes);
  switch (choice_) {
    case AlgorithmChoice::ring: return time_of(plan(c, dim, Algorithm::ring), bytes);
    case AlgorithmChoice::tree: return time_of(plan(c, dim, Algorithm::tree), bytes);
    case AlgorithmChoice::hierarchical: return time_of(plan(c, dim, Algorithm::hierarchical), bytes);
    case AlgorithmChoice::nvls: return time_of(plan(c, dim, Algorithm::nvls), bytes);
    case AlgorithmChoice::automatic: break;
  }
  // NCCL's default: the fastest of its native algorithms for this size (tuning.cc); the
  // double binary tree only spans nodes, NVLS only serves a group inside one NVSwitch node.
  CollectiveTime best = time_of(plan(c, dim, Algorithm::ring), bytes);
  const std::vector<int> group = groups_of(layout_, dim).front();
  const bool multi_node = topo_.node_of(group.front()) != topo_.node_of(group.back());
  if (multi_node) {
    const CollectiveTime tree = time_of(plan(c, dim, Algorithm::tree), bytes);
    if (tree.time_s < best.time_s) best = tree;
  } else if (topo_.spec().nvls_efficiency > 0 && topo_.has_nvlink() && int(group.size()) >= kNvlsMinRanks) {
    const CollectiveTime nvls = time_of(plan(c, dim, Algorithm::nvls), bytes);
    if (nvls.time_s < best.time_s) best = nvls;
  }
  return best;
}

sim::TaskId append_collective(sim::TaskGraph& graph, const CollectiveTime& t, std::int32_t stream,
                              std::vector<sim::TaskId> deps, std::int32_t link_resource_base,
                              std::vector<sim::ResourceUse> extra_uses, std::int32_t priority, std::int32_t tag) {
  sim::TaskId last = -1;
  if (t.phases.empty()) {  // nothing to move: a zero-work marker keeps the dependency chain
    sim::Task task;
    task.stream = stream;
    task.deps = std::move(deps);
    task.priority = priority;
    task.tag = tag;
    return graph.add(std::move(task));
  }
  for (const PhaseTime& ph : t.phases) {
    sim::Task task;
    task.stream = stream;
    task.work = sim::Time::from_seconds(ph.time_s);
    task.deps = last >= 0 ? std::vector<sim::TaskId>{last} : std::move(deps);
    task.uses = extra_uses;
    for (std::size_t c = 0; c < ph.demand.size(); ++c)
      if (ph.demand[c] > 0) task.uses.push_back({link_resource_base + std::int32_t(c), ph.demand[c]});
    task.priority = priority;
    task.tag = tag;
    last = graph.add(std::move(task));
  }
  return last;
}

}  // namespace clustersim::topologies
