#pragma once
// `clustersim collective`: one collective over a topology, printed like nccl-tests (size, time,
// algbw, busbw) so users can hold the network model against their own nccl-tests runs.
#include <CLI/CLI.hpp>

#include <string>

namespace clustersim::tools {

struct CollectiveOptions {
  std::string topology = "dgx-h100";
  int nodes = 1;
  std::string op = "all_reduce";
  std::string sizes = "1KB..8GB";
  std::string algorithm = "auto";
  int tp = 1, cp = 1, pp = 1;         ///< the other dimensions of the layout (dp fills the rest)
  std::string group = "dp";           ///< which groups run the collective (all of them at once)
  bool json = false;
};

CLI::App* add_collective_command(CLI::App& app, CollectiveOptions& o);
/// Prints the table (or JSON rows); returns the exit code. Throws ScenarioError on bad input.
int run_collective(const CollectiveOptions& o);

}  // namespace clustersim::tools
