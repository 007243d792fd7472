#include "tools/collective_command.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "scenarios/error.hpp"
#include "scenarios/topology_load.hpp"
#include "scenarios/quantity.hpp"
#include "sim/runner.hpp"
#include "topologies/network.hpp"

namespace clustersim::tools {
namespace {

using scenarios::ScenarioError;

const std::vector<std::string> kOps = {"all_reduce", "reduce_scatter", "all_gather", "all_to_all", "send_recv"};
const std::vector<std::string> kAlgorithms(topologies::kAlgorithmChoiceNames.begin(), topologies::kAlgorithmChoiceNames.end());

double parse_bytes(const std::string& text) {
  std::string why;
  auto v = scenarios::parse_quantity(text, scenarios::Dimension::bytes, &why);
  if (!v || *v < 1) throw ScenarioError(fmt::format("--sizes: '{}' is not a size such as 1GiB ({})", text, why));
  return *v;
}

// "1KB..8GB" doubles from the first size to the last, as nccl-tests -b/-e/-f 2; "1GiB" is one size.
std::vector<double> parse_sizes(const std::string& text) {
  const auto dots = text.find("..");
  if (dots == std::string::npos) return {parse_bytes(text)};
  const double lo = parse_bytes(text.substr(0, dots)), hi = parse_bytes(text.substr(dots + 2));
  if (hi < lo) throw ScenarioError(fmt::format("--sizes {}: the last size is below the first", text));
  std::vector<double> out;
  for (double s = lo; s <= hi * (1 + 1e-12); s *= 2) out.push_back(s);
  return out;
}

topologies::TopologySpec load(const std::string& name) {
  if (std::filesystem::path(name).extension() == ".yaml") {
    std::ifstream in(name);
    if (!in) throw ScenarioError(fmt::format("{}: cannot open the topology file", name));
    std::stringstream ss;
    ss << in.rdbuf();
    return scenarios::parse_topology(ss.str(), name);
  }
  return scenarios::topology_preset(name);
}

struct Row {
  double size_bytes, time_s, algbw, busbw;
  topologies::CollectiveTime t;
};

}  // namespace

CLI::App* add_collective_command(CLI::App& app, CollectiveOptions& o) {
  auto* c = app.add_subcommand("collective", "time one NCCL-style collective over a topology (nccl-tests table)");
  c->add_option("--topology", o.topology, "topology preset name or a topology .yaml file")->capture_default_str();
  c->add_option("--nodes", o.nodes, "nodes (scale-up domains); all their GPUs form one communicator")
      ->check(CLI::Range(1, 16384))->capture_default_str();
  c->add_option("--op", o.op, "collective")->check(CLI::IsMember(kOps))->capture_default_str();
  c->add_option("--sizes,--size", o.sizes, "S in bytes (nccl-tests): one size, or FIRST..LAST doubling")
      ->capture_default_str();
  c->add_option("--algorithm", o.algorithm, "all-reduce algorithm")->check(CLI::IsMember(kAlgorithms))->capture_default_str();
  c->add_option("--tp", o.tp, "tensor-parallel size of the layout (ranks: TP innermost, then CP, PP, DP)")
      ->check(CLI::Range(1, 1 << 20))->capture_default_str();
  c->add_option("--cp", o.cp, "context-parallel size of the layout")->check(CLI::Range(1, 1 << 20))->capture_default_str();
  c->add_option("--pp", o.pp, "pipeline-parallel size of the layout")->check(CLI::Range(1, 1 << 20))->capture_default_str();
  c->add_option("--group", o.group, "the groups that run the collective, all concurrently")
      ->check(CLI::IsMember({"tp", "cp", "pp", "dp"}))->capture_default_str();
  c->add_flag("--json", o.json, "print a JSON list of rows (SI units)");
  return c;
}

int run_collective(const CollectiveOptions& o) {
  using namespace topologies;
  const TopologySpec spec = load(o.topology);
  const std::vector<double> sizes = parse_sizes(o.sizes);
  const auto op = static_cast<Collective>(std::find(kOps.begin(), kOps.end(), o.op) - kOps.begin());
  const auto choice = static_cast<AlgorithmChoice>(std::find(kAlgorithms.begin(), kAlgorithms.end(), o.algorithm) - kAlgorithms.begin());
  Layout layout{o.tp, o.cp, o.pp, 1};
  const int gpus = o.nodes * spec.gpus_per_node, inner = o.tp * o.cp * o.pp;
  if (gpus % inner != 0)
    throw ScenarioError(fmt::format("--tp x --cp x --pp = {} does not divide the {} GPUs of {} node(s)", inner, gpus, o.nodes));
  layout.sizes[index(GroupDim::dp)] = gpus / inner;
  const std::vector<std::string> dims = {"tp", "cp", "pp", "dp"};
  const auto dim = static_cast<GroupDim>(std::find(dims.begin(), dims.end(), o.group) - dims.begin());
  const int ranks = layout.size(dim);
  const Network net(spec, o.nodes, layout, choice);
  std::vector<Row> rows;
  for (double s : sizes) {
    // The time comes from running the collective's phase tasks on the event engine.
    const CollectiveTime t = net.cost(op, dim, units::Bytes(s));
    sim::TaskGraph g;
    append_collective(g, t, 0, {}, 0);
    const double time_s = sim::run_task_graph(g).makespan.seconds();
    const double algbw = time_s > 0 ? s / time_s : 0;
    rows.push_back({s, time_s, algbw, algbw * bus_factor(op, ranks), t});
  }
  std::string out;
  if (o.json) {
    out += "[\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      out += fmt::format(
          "  {{\"op\": \"{}\", \"topology\": \"{}\", \"nodes\": {}, \"ranks\": {}, \"size_bytes\": {:.17g}, "
          "\"time_s\": {:.17g}, \"algbw_bytes_per_s\": {:.17g}, \"busbw_bytes_per_s\": {:.17g}, "
          "\"algorithm\": \"{}\", \"protocol\": \"{}\"}}{}\n",
          o.op, spec.name, o.nodes, ranks, r.size_bytes, r.time_s, r.algbw, r.busbw, name(r.t.algorithm),
          name(r.t.protocol), i + 1 < rows.size() ? "," : "");
    }
    out += "]\n";
  } else {
    out += fmt::format("# clustersim collective: {} on {} ({}), {} node(s) x {} GPUs\n", o.op, spec.name,
                       spec.description, o.nodes, spec.gpus_per_node);
    out += fmt::format("# layout tp {} x cp {} x pp {} x dp {}; {} concurrent {} groups of {} ranks\n", layout.sizes[0],
                       layout.sizes[1], layout.sizes[2], layout.sizes[3], gpus / ranks, o.group, ranks);
    out += fmt::format("# {:>14} {:>12} {:>12} {:>12}  {:<13} {}\n", "size(B)", "time(us)", "algbw(GB/s)",
                       "busbw(GB/s)", "algorithm", "protocol");
    for (const Row& r : rows)
      out += fmt::format("  {:>14.0f} {:>12.2f} {:>12.2f} {:>12.2f}  {:<13} {}\n", r.size_bytes, r.time_s * 1e6,
                         r.algbw / 1e9, r.busbw / 1e9, name(r.t.algorithm), name(r.t.protocol));
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace clustersim::tools
