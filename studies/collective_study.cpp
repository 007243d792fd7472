#include "studies/collective_study.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "models/step_program_moe.hpp"
#include "models/training_spec.hpp"
#include "scenarios/error.hpp"
#include "scenarios/plan_rules.hpp"
#include "scenarios/quantity.hpp"
#include "scenarios/topology_load.hpp"
#include "sim/runner.hpp"
#include "topologies/network.hpp"
#include "topologies/topology.hpp"

namespace clustersim::studies {

using scenarios::ScenarioError;
using topologies::GroupDim;

namespace {

double parse_bytes(const std::string& text) {
  std::string why;
  auto v = scenarios::parse_quantity(text, scenarios::Dimension::bytes, &why);
  if (!v || *v < 1) throw ScenarioError(fmt::format("--sizes: '{}' is not a size such as 1GiB ({})", text, why));
  return *v;
}

// "1, 2, 4, ..., n": the divisors of n.
std::string divisors(long n) {
  std::string out;
  for (long d = 1; d <= n; ++d)
    if (n % d == 0) out += (out.empty() ? "" : ", ") + std::to_string(d);
  return out;
}

// The most nodes any one group of `dim` spans.
int group_nodes(const topologies::Layout& layout, GroupDim dim, int gpus_per_node) {
  int most = 0;
  for (const auto& group : topologies::groups_of(layout, dim)) {
    std::set<int> nodes;
    for (int gpu : group) nodes.insert(gpu / gpus_per_node);
    most = std::max(most, int(nodes.size()));
  }
  return most;
}

// The algorithms an op can be forced to: all-reduce any; reduce-scatter and all-gather ring or
// hierarchical (NCCL's tree and NVLS serve all-reduce only, topologies::Network::fastest());
// all-to-all and send/recv have one, direct.
void check_algorithm(const CollectiveRequest& r) {
  using topologies::AlgorithmChoice;
  using topologies::Collective;
  const AlgorithmChoice a = r.algorithm;
  if (a == AlgorithmChoice::automatic || r.op == Collective::all_reduce) return;
  const bool direct = r.op == Collective::all_to_all || r.op == Collective::send_recv;
  if (!direct && (a == AlgorithmChoice::ring || a == AlgorithmChoice::hierarchical)) return;
  throw ScenarioError(fmt::format("--algorithm {}: {} does not run it; allowed for --op {}: {}",
                                  topologies::kAlgorithmChoiceNames[static_cast<std::size_t>(a)], name(r.op), name(r.op),
                                  direct ? "auto (direct)" : "auto, ring, hierarchical"));
}

// --dispatcher deepep's needs: the EP all-to-all (--op all_to_all --group ep) of a model with
// --experts (divisible by ep, as the loader requires) and --top-k (1 to experts).
void check_dispatcher(const CollectiveRequest& r, int ep) {
  const bool deepep = models::uses_ep_kernels(r.dispatcher);
  if (!deepep && (r.experts > 0 || r.top_k > 0 || r.router_groups > 1 || r.router_group_top_k > 0))
    throw ScenarioError(fmt::format("{}: only --dispatcher deepep or hybridep uses it (their de-duplication)",
                                    r.experts > 0         ? "--experts"
                                    : r.top_k > 0         ? "--top-k"
                                    : r.router_groups > 1 ? "--router-groups"
                                                          : "--router-group-top-k"));
  if (r.dispatcher == models::MoeDispatcher::allgather)
    throw ScenarioError(
        "--dispatcher allgather: it is an all-gather over the EP group; use --op all_gather --group ep; "
        "allowed: alltoall, deepep, hybridep");
  if (!deepep) return;
  if (r.op != topologies::Collective::all_to_all || r.group != GroupDim::ep)
    throw ScenarioError(
        fmt::format("--dispatcher {}: prices the EP token exchange, --op all_to_all --group ep "
                    "(here --op {} --group {})",
                    models::name(r.dispatcher), name(r.op), topologies::name(r.group)));
  if (r.experts <= 0 || r.top_k <= 0)
    throw ScenarioError(
        fmt::format("--dispatcher {}: needs the model's routed experts and experts per token, "
                    "--experts N --top-k K (DeepSeek-V3: --experts 256 --top-k 8)",
                    models::name(r.dispatcher)));
  if (r.top_k > r.experts)
    throw ScenarioError(fmt::format("--top-k {}: a token picks at most the {} routed experts (--experts)", r.top_k, r.experts));
  if (const std::string why = scenarios::ep_refusal(ep, r.experts); !why.empty())
    throw ScenarioError(fmt::format("--experts {}: {}", r.experts, why));
  if (const std::string why = scenarios::router_groups_refusal(r.router_groups, r.experts); !why.empty())
    throw ScenarioError(fmt::format("--router-groups {}: {}", r.router_groups, why));
  if (r.router_group_top_k > 0)
    if (const std::string why = scenarios::router_group_top_k_refusal(r.router_group_top_k, r.router_groups, r.top_k);
        !why.empty())
      throw ScenarioError(fmt::format("--router-group-top-k {}: {}", r.router_group_top_k, why));
}

}  // namespace

topologies::TopologySpec collective_spec(const CollectiveRequest& r) {
  if (r.gpus_per_node <= 0 || r.gpus_per_node == r.spec.gpus_per_node) return r.spec;
  const auto& t = r.spec;
  if (!scenarios::reshapes_to(t, r.gpus_per_node))
    throw ScenarioError(fmt::format("--gpus-per-node {}: does not fit {}'s {}-GPU node; use a divisor or multiple of {}{}",
                                    r.gpus_per_node, t.name, t.gpus_per_node, t.gpus_per_node,
                                    t.node_kind == topologies::NodeKind::nvl_domain
                                        ? fmt::format(", or whole 4-GPU trays below {}", t.gpus_per_node) : ""));
  topologies::TopologySpec s = scenarios::reshaped(t, r.gpus_per_node);
  try {
    topologies::Topology::validate(s, 1);
  } catch (const std::invalid_argument& e) {
    throw ScenarioError(fmt::format("--gpus-per-node {}: the nodes cannot be wired as {}: {}", r.gpus_per_node, t.name, e.what()));
  }
  return s;
}

std::vector<double> parse_collective_sizes(const std::string& text) {
  const auto dots = text.find("..");
  if (dots == std::string::npos) return {parse_bytes(text)};
  const double lo = parse_bytes(text.substr(0, dots)), hi = parse_bytes(text.substr(dots + 2));
  if (hi < lo) throw ScenarioError(fmt::format("--sizes {}: the last size is below the first", text));
  std::vector<double> out;
  for (double s = lo; s <= hi * (1 + 1e-12); s *= 2) out.push_back(s);
  if (out.back() < hi * (1 - 1e-12)) out.push_back(hi);  // 1MB..1GB doubles to 512 MB, then the last size given
  return out;
}

topologies::PlacementOrder parse_placement(const std::string& text) {
  topologies::PlacementOrder order{};
  std::vector<std::string> names;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == ',') names.push_back(text.substr(start, i - start)), start = i + 1;
  std::set<std::string> seen;
  bool ok = names.size() == topologies::kPlacedDims;
  for (std::size_t i = 0; ok && i < names.size(); ++i) {
    const auto* end = topologies::kGroupDimNames.begin() + topologies::kPlacedDims;
    const auto* it = std::find_if(topologies::kGroupDimNames.begin(), end, [&](const char* n) { return names[i] == n; });
    ok = it != end && seen.insert(names[i]).second;
    if (ok) order[i] = static_cast<GroupDim>(it - topologies::kGroupDimNames.begin());
  }
  if (!ok)
    throw ScenarioError(fmt::format("--placement {}: expected tp, cp, pp and dp once each, innermost first, e.g. tp,cp,dp,pp", text));
  return order;
}

topologies::TopologySpec collective_topology(const std::string& name) {
  if (std::filesystem::path(name).extension() == ".yaml") {
    std::ifstream in(name);
    if (!in) throw ScenarioError(fmt::format("{}: cannot open the topology file", name));
    std::stringstream ss;
    ss << in.rdbuf();
    return scenarios::parse_topology(ss.str(), name);
  }
  return scenarios::topology_preset(name);
}

topologies::Layout collective_layout(const CollectiveRequest& r, int gpus) {
  models::ParallelSpec p;
  p.tp = r.tp, p.cp = r.cp, p.pp = r.pp;
  const int inner = r.tp * r.cp * r.pp;
  if (gpus % inner != 0)
    throw ScenarioError(r.gpus > 0 ? fmt::format("--tp x --cp x --pp = {} does not divide the {} GPUs (--gpus)", inner, gpus)
                                   : fmt::format("--tp x --cp x --pp = {} does not divide the {} GPUs of {} node(s)", inner,
                                                 gpus, r.nodes));
  p.dp = gpus / inner;
  if (r.ep == 0 && r.etp > 0)
    throw ScenarioError(fmt::format("--etp {}: needs --ep N (etp splits each expert over ranks of the expert layout --ep gives)", r.etp));
  if (r.ep == 0 && topologies::folded(r.group))
    throw ScenarioError(fmt::format("--group {}: the expert groups (ep, etp, edp) need an expert layout, --ep N "
                                    "(and optionally --etp N); without one the groups are tp, cp, pp, dp",
                                    topologies::name(r.group)));
  if (r.ep > 0) {
    p.ep = r.ep;
    p.etp = r.etp > 0 ? r.etp : r.tp;  // the scenario loader's default (scenarios/load_moe.cpp)
    // The loader's fold rule (scenarios/plan_rules.cpp), with the ep values that would fold.
    const long fold = long(p.tp) * p.cp * p.dp;
    if (const std::string why = scenarios::expert_fold_refusal(p.ep, p.etp, fold); !why.empty())
      throw ScenarioError(fmt::format("--ep {} --etp {}: {}; with etp {}, ep may be {}", p.ep, p.etp, why, p.etp,
                                      fold % p.etp ? std::string("nothing (etp does not divide it)")
                                                   : divisors(fold / p.etp)));
  }
  return {p.sizes(), r.placement};
}

CollectiveResult run_collective_study(const CollectiveRequest& r) {
  using namespace topologies;
  CollectiveResult res;
  const TopologySpec spec = collective_spec(r);
  const int per_node = spec.gpus_per_node;
  if (r.gpus > 0) {
    // As the scenario loader: a server is scheduled whole, a rack-scale NVLink domain is not.
    if (spec.node_kind != NodeKind::nvl_domain && r.gpus > per_node && r.gpus % per_node != 0)
      throw ScenarioError(fmt::format("--gpus {}: not whole nodes of {}; use a multiple of {} (or at most {} GPUs, part of one node)",
                                      r.gpus, spec.name, per_node, per_node));
    res.gpus = r.gpus;
    res.nodes = Network::nodes_for(spec, r.gpus);
  } else {
    res.nodes = r.nodes;
    res.gpus = r.nodes * per_node;
  }
  res.layout = collective_layout(r, res.gpus);
  res.experts = r.ep > 0;
  res.group_ranks = res.layout.size(r.group);
  res.groups = res.gpus / res.group_ranks;
  res.group_nodes = group_nodes(res.layout, r.group, per_node);
  res.spec = spec;
  check_dispatcher(r, res.layout.size(GroupDim::ep));
  check_algorithm(r);
  const Network net(spec, res.nodes, res.layout, r.algorithm);
  // The step model's factor (models/step_program_moe.cpp prices a deepep exchange so).
  if (models::uses_ep_kernels(r.dispatcher)) {
    models::MoeSpec moe;
    moe.experts = r.experts, moe.top_k = r.top_k;
    moe.router_groups = r.router_groups, moe.router_group_top_k = r.router_group_top_k;
    res.dedup = models::deepep_node_dedup(moe, net);
  }
  for (double s : r.sizes) {
    // The time comes from running the collective's phase tasks on the event engine.
    const CollectiveTime t = net.cost(r.op, r.group, units::Bytes(s * res.dedup));
    sim::TaskGraph g;
    append_collective(g, t, 0, {}, 0);
    const double time_s = sim::run_task_graph(g).makespan.seconds();
    const double algbw = time_s > 0 ? s / time_s : 0;
    res.rows.push_back({s, time_s, algbw, algbw * bus_factor(r.op, res.group_ranks), t});
  }
  return res;
}

}  // namespace clustersim::studies
