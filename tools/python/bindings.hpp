#pragma once
// What the Python module calls, in plain C++ (no Python types), so the bindings stay a thin layer over
// the same library calls the CLI makes. Errors are scenarios::ScenarioError, as in the CLI.
#include <string>
#include <vector>

#include "scenarios/error.hpp"

namespace clustersim::python {

using ScenarioError = scenarios::ScenarioError;

struct ScenarioInput {
  std::string text;   ///< a file path, or the scenario's YAML/JSON text
  bool is_path = true;
};

/// The JSON object `clustersim run [--explain] --json` prints for the scenario.
std::string run_json(const ScenarioInput& in, const std::vector<std::string>& sets, bool explain);

struct SweepTable {
  std::vector<std::string> header;             ///< the columns of `clustersim sweep --csv`
  std::vector<std::vector<std::string>> rows;  ///< in configuration order
};
/// `axes` are "key=values" as --vary takes them; `sets` are fixed overrides as --set.
SweepTable sweep_table(const ScenarioInput& in, const std::vector<std::string>& axes, bool auto_parallel,
                       const std::vector<std::string>& sets, int threads);

/// The JSON object `clustersim validate --json [--csv F] [--source P]` prints (csv empty: the compiled-in set).
std::string validate_json(const std::string& csv, const std::string& source);

struct PlanInput {
  std::string model, tokens;  ///< tokens as the CLI takes them: 15e12, 15T
  std::vector<std::string> hardware;
  double days = 0;
  int seq_len = 4096, global_batch = 0, max_gpus = 0, gpu_step = 0, top = 10, threads = 0;
  double cost_per_gpu_hour = 0;
  std::string prices;          ///< per hardware as --cost-per-gpu-hour takes them ("" : none)
  std::string batch_tokens;    ///< as --batch-tokens ("" : the one global batch)
  double node_overhead_w = -1, node_overhead_fraction = -1, pue = -1, price_per_kwh = -1;  ///< < 0: the CLI's default
  std::string by = "cost";
  int max_vpp = 8;
  double confidence = 0;
  std::vector<std::string> fixes;
};
/// The JSON object `clustersim plan --json` prints.
std::string plan_json(const PlanInput& in);

const char* version();

}  // namespace clustersim::python
