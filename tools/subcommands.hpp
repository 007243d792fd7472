#pragma once
// Subcommands that live outside clustersim.cpp (sweep, merge, plan) register through this
// hook: each adds itself to the app and returns what to run when it was chosen.
#include <CLI/CLI.hpp>

#include <functional>
#include <vector>

namespace clustersim::tools {

struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;  ///< exit code; may throw ScenarioError (exit 2)
};

std::vector<Subcommand> register_subcommands(CLI::App& app);

Subcommand add_sweep_command(CLI::App& app);
Subcommand add_merge_command(CLI::App& app);
Subcommand add_plan_command(CLI::App& app);
Subcommand add_calibrate_command(CLI::App& app);  ///< tools/calibrate_command.cpp

}  // namespace clustersim::tools
