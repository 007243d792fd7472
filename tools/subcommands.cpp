#include "tools/subcommands.hpp"

#include "tools/import_command.hpp"

namespace clustersim::tools {

std::vector<Subcommand> register_subcommands(CLI::App& app) {
  return {add_sweep_command(app), add_merge_command(app), add_plan_command(app), add_import_command(app), add_presets_command(app), add_calibrate_command(app)};
}

}  // namespace clustersim::tools
