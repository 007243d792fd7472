#pragma once
// `clustersim collective`: one collective over a topology, printed like nccl-tests (size, time,
// algbw, busbw) so users can hold the network model against their own nccl-tests runs. The
// study and the printing are studies/collective_study and reporters/collective_report.
#include <CLI/CLI.hpp>

#include <string>

namespace clustersim::tools {

struct CollectiveOptions {
  std::string topology = "dgx-h100";
  int nodes = 1;
  int gpus = 0;                       ///< --gpus (0: every GPU of --nodes)
  int gpus_per_node = 0;              ///< --gpus-per-node (0: the topology's)
  std::string op = "all_reduce";
  std::string sizes = "1KB..8GB";
  std::string algorithm = "auto";
  int tp = 1, cp = 1, pp = 1;         ///< the other dimensions of the layout (dp fills the rest)
  int ep = 0, etp = 0;                ///< the expert layout (0: not given)
  std::string placement = "tp,cp,dp,pp";  ///< innermost first (the scenario default, Megatron-Core's order)
  std::string group = "dp";           ///< which groups run the collective (all of them at once)
  std::string dispatcher = "alltoall";  ///< the EP exchange's dispatcher (deepep: node de-duplication)
  int experts = 0, top_k = 0;         ///< the model's routed experts and experts per token (deepep)
  int router_groups = 1, router_group_top_k = 0;  ///< group-limited routing (deepep, hybridep); 0: no limit
  bool json = false;
};

CLI::App* add_collective_command(CLI::App& app, CollectiveOptions& o);
/// Prints the table (or JSON rows); returns the exit code. Throws ScenarioError on bad input.
int run_collective(const CollectiveOptions& o);

}  // namespace clustersim::tools
