#pragma once
// `clustersim import megatron|torchtitan|hf FILE` and `clustersim presets [KIND | show NAME]`.
#include "tools/subcommands.hpp"

namespace clustersim::tools {

Subcommand add_import_command(CLI::App& app);
Subcommand add_presets_command(CLI::App& app);

}  // namespace clustersim::tools
