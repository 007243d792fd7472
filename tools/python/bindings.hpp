#pragma once
// What the Python module calls, in plain C++ (no Python types), so the bindings stay a thin layer over
// the same library calls the CLI makes. Errors are scenarios::ScenarioError, as in the CLI.
#include <string>
#include <vector>

#include "scenarios/error.hpp"
#include "tools/plan_request.hpp"

namespace clustersim::python {

using ScenarioError = scenarios::ScenarioError;

struct ScenarioInput {
  std::string text;   ///< a file path, or the scenario's YAML/JSON text
  bool is_path = true;
};

/// The JSON object `clustersim run [--explain] --json` prints for the scenario. `strict`: a
/// scenario that does not fit in memory throws the error the CLI prints before exiting 3.
std::string run_json(const ScenarioInput& in, const std::vector<std::string>& sets, bool explain, bool strict = false);

struct SweepTable {
  std::vector<std::string> header;             ///< the columns of `clustersim sweep --csv`
  std::vector<std::vector<std::string>> rows;  ///< in configuration order
};
/// `axes` are "key=values" as --vary takes them; `sets` are fixed overrides as --set;
/// `schedules` as --schedules ("": the default list).
SweepTable sweep_table(const ScenarioInput& in, const std::vector<std::string>& axes, bool auto_parallel,
                       const std::vector<std::string>& sets, int threads, const std::string& schedules = "");

/// The JSON object `clustersim validate --json [--csv F] [--source P]` prints (csv empty: the compiled-in set).
std::string validate_json(const std::string& csv, const std::string& source, const std::string& group_by = "");

/// The options of `clustersim plan`, shared with the CLI (tools/plan_request.hpp).
using PlanInput = tools::PlanOptions;
/// The JSON object `clustersim plan --json` prints (its "fits" is false where the CLI exits 3).
/// `strict`: no plan meeting the deadline throws, with the CLI's line.
std::string plan_json(const PlanInput& in, bool strict = false);

const char* version();

}  // namespace clustersim::python
