#include "tools/collective_command.hpp"

#include <algorithm>
#include <iterator>
#include <cstdio>
#include <vector>

#include "reporters/collective_report.hpp"
#include "studies/collective_study.hpp"

namespace clustersim::tools {
namespace {

const std::vector<std::string> kOps = {"all_reduce", "reduce_scatter", "all_gather", "all_to_all", "send_recv"};
const std::vector<std::string> kAlgorithms(topologies::kAlgorithmChoiceNames.begin(), topologies::kAlgorithmChoiceNames.end());
const std::vector<std::string> kGroups(topologies::kGroupDimNames.begin(), topologies::kGroupDimNames.end());
const std::vector<std::string> kDispatchers(std::begin(models::kMoeDispatcherNames), std::end(models::kMoeDispatcherNames));

template <class E>
E choice(const std::vector<std::string>& names, const std::string& v) {
  return static_cast<E>(std::find(names.begin(), names.end(), v) - names.begin());
}

}  // namespace

CLI::App* add_collective_command(CLI::App& app, CollectiveOptions& o) {
  auto* c = app.add_subcommand("collective", "time one NCCL-style collective over a topology (nccl-tests table)");
  c->add_option("--topology", o.topology, "topology preset name or a topology .yaml file")->capture_default_str();
  auto* nodes = c->add_option("--nodes", o.nodes, "nodes (scale-up domains); all their GPUs form one communicator")
                    ->check(CLI::Range(1, 16384))->capture_default_str();
  c->add_option("--gpus", o.gpus, "the job's GPUs instead of --nodes (a rack-scale NVLink domain may be part-used)")
      ->check(CLI::Range(1, 1 << 20))->excludes(nodes);
  c->add_option("--gpus-per-node", o.gpus_per_node, "use this many GPUs of each node, as a scenario's cluster.gpus_per_node "
                "(64: 16 of an NVL72 rack's 18 trays)")->check(CLI::Range(1, 1024));
  c->add_option("--op", o.op, "collective (the EP token dispatch/combine is an all_to_all)")
      ->check(CLI::IsMember(kOps))->capture_default_str();
  c->add_option("--sizes,--size", o.sizes, "S in bytes (nccl-tests): one size, or FIRST..LAST doubling")
      ->capture_default_str();
  c->add_option("--algorithm", o.algorithm, "all-reduce algorithm")->check(CLI::IsMember(kAlgorithms))->capture_default_str();
  c->add_option("--tp", o.tp, "tensor-parallel size of the layout (ranks: TP innermost, then CP, PP, DP; see --placement)")
      ->check(CLI::Range(1, 1 << 20))->capture_default_str();
  c->add_option("--cp", o.cp, "context-parallel size of the layout")->check(CLI::Range(1, 1 << 20))->capture_default_str();
  c->add_option("--pp", o.pp, "pipeline-parallel size of the layout")->check(CLI::Range(1, 1 << 20))->capture_default_str();
  c->add_option("--ep", o.ep, "expert-parallel size: experts fold over a stage's tp·cp·dp ranks = etp·ep·edp")
      ->check(CLI::Range(1, 1 << 20));
  c->add_option("--etp", o.etp, "expert tensor-parallel size (with --ep; default: tp)")->check(CLI::Range(1, 1 << 20));
  c->add_option("--placement", o.placement, "rank placement, innermost first, as a scenario's network.placement")
      ->capture_default_str();
  c->add_option("--group", o.group, "the groups that run the collective, all concurrently (ep, etp, edp need --ep)")
      ->check(CLI::IsMember(kGroups))->capture_default_str();
  c->add_option("--dispatcher", o.dispatcher,
                "the EP token exchange's dispatcher, as training.moe_dispatcher: deepep and hybridep "
                "send a token once per destination node, or per rank within one node (needs --experts, --top-k; --op "
                "all_to_all --group ep); the link model alone, without their measured kernel rates")
      ->check(CLI::IsMember(kDispatchers))
      ->capture_default_str();
  c->add_option("--experts", o.experts, "the model's routed experts (--dispatcher deepep, hybridep)")
      ->check(CLI::Range(1, 1 << 20));
  c->add_option("--top-k", o.top_k, "routed experts per token (--dispatcher deepep, hybridep)")
      ->check(CLI::Range(1, 1 << 20));
  c->add_option("--router-groups", o.router_groups,
                "expert groups of group-limited routing, as model.moe.router_groups (DeepSeek-V3: 8)")
      ->check(CLI::Range(1, 1 << 20));
  c->add_option("--router-group-top-k", o.router_group_top_k,
                "groups a token routes within, as model.moe.router_group_top_k (DeepSeek-V3: 4; needs --router-groups)")
      ->check(CLI::Range(1, 1 << 20));
  c->add_flag("--json", o.json, "print a JSON list of rows (SI units)");
  return c;
}

int run_collective(const CollectiveOptions& o) {
  studies::CollectiveRequest q;
  q.spec = studies::collective_topology(o.topology);
  q.sizes = studies::parse_collective_sizes(o.sizes);
  q.nodes = o.nodes, q.gpus = o.gpus, q.gpus_per_node = o.gpus_per_node;
  q.op = choice<topologies::Collective>(kOps, o.op);
  q.algorithm = choice<topologies::AlgorithmChoice>(kAlgorithms, o.algorithm);
  q.tp = o.tp, q.cp = o.cp, q.pp = o.pp, q.ep = o.ep, q.etp = o.etp;
  q.group = choice<topologies::GroupDim>(kGroups, o.group);
  q.dispatcher = choice<models::MoeDispatcher>(kDispatchers, o.dispatcher);
  q.experts = o.experts, q.top_k = o.top_k;
  q.router_groups = o.router_groups, q.router_group_top_k = o.router_group_top_k;
  q.placement = studies::parse_placement(o.placement);
  const studies::CollectiveResult res = studies::run_collective_study(q);
  const std::string out = o.json ? reporters::collective_json(q, res) : reporters::collective_text(q, res);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace clustersim::tools
