#pragma once
// Helpers shared by tests: small inline scenarios and running the CLI.
#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace clustersim::testing {

/// A scenario text for `model` on `gpus` GPUs of `hardware`, with `extra_training` appended
/// under training: (each line indented by 2 spaces by the caller).
inline std::string scenario_text(const std::string& model, const std::string& hardware, int gpus,
                                 int seq_len, int global_batch, const std::string& parallel_extra = "",
                                 const std::string& training_extra = "") {
  return "name: test\nmodel: " + model + "\nhardware: " + hardware + "\ncluster:\n  gpus: " +
         std::to_string(gpus) + "\nparallelism:\n  tp: 1\n" + parallel_extra + "training:\n  seq_len: " +
         std::to_string(seq_len) + "\n  global_batch: " + std::to_string(global_batch) + "\n" + training_extra;
}

inline scenarios::Report run_text(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  return scenarios::simulate(scenarios::load_scenario_string(yaml, "<test>", sets));
}

/// The GPU spec of hardware profile `profile` (a preset name or file) as a scenario loads it.
inline hardware::GpuSpec gpu_profile(const std::string& profile) {
  return scenarios::load_scenario_string("model: llama2-7b\nhardware: " + profile +
                                             "\ncluster: {gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n",
                                         "<test>")
      .gpu;
}

inline scenarios::Report run_main_scenario(const std::vector<std::string>& sets = {}) {
  return scenarios::simulate(
      scenarios::load_scenario_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/7b_256xh100.yaml", sets));
}

struct CommandResult {
  int exit_code = -1;
  std::string out;  ///< stdout and stderr together when merge_stderr
};

/// Runs a shell command and captures its output.
inline CommandResult run_command(const std::string& cmd) {
  CommandResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), int(buf.size()), pipe)) r.out += buf.data();
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// The loader's error for a scenario text, "" when it loads.
inline std::string load_error_of(const std::string& yaml, const std::string& source = "s.yaml") {
  try {
    scenarios::load_scenario_string(yaml, source);
  } catch (const scenarios::ScenarioError& e) {
    return e.what();
  }
  return "";
}

}  // namespace clustersim::testing
