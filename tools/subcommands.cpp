#include "tools/subcommands.hpp"

namespace clustersim::tools {

std::vector<Subcommand> register_subcommands(CLI::App& app) {
  return {add_sweep_command(app), add_merge_command(app), add_plan_command(app)};
}

}  // namespace clustersim::tools
