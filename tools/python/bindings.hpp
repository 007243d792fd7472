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

const char* version();

}  // namespace clustersim::python
