#include "validation/validation_run.hpp"

#include <fmt/format.h>

#include "scenarios/error.hpp"
#include "validation/calibrate.hpp"

namespace clustersim::studies {

ValidationRun run_validation(const CsvTable& table, const std::string& table_name, const std::string& prefix,
                             const std::string& group_by) {
  if (!group_by.empty()) check_group_column(table, table_name, group_by);  // before the minutes of simulation
  ValidationRun run;
  run.summary = validate_table(table, prefix);
  add_out_of_sample(table, prefix, &run.summary);
  if (run.summary.rows.empty())
    throw scenarios::ScenarioError(fmt::format("{}: no row id starts with '{}'", table_name, prefix));
  if (!group_by.empty()) run.groups = group_residuals(table, table_name, run.summary, group_by);
  return run;
}

}  // namespace clustersim::studies
