#pragma once
// What `clustersim validate` and `clustersim.validate` compute for a published-runs table: every
// row predicted, the out-of-sample refits, and (with a group-by column) the residual groups.
#include <optional>
#include <string>

#include "studies/csv_table.hpp"
#include "validation/validation.hpp"
#include "validation/validation_groups.hpp"

namespace clustersim::studies {

struct ValidationRun {
  ValidationSummary summary;              ///< with add_out_of_sample()'s held-out figures
  std::optional<ResidualGroups> groups;   ///< when a group-by column was given
};

/// Validates the rows of `table` whose id starts with `prefix`. A bad `group_by` column is refused
/// before anything is simulated; no matching row is an error. Both name `table_name`
/// (scenarios::ScenarioError).
ValidationRun run_validation(const CsvTable& table, const std::string& table_name, const std::string& prefix,
                             const std::string& group_by = "");

}  // namespace clustersim::studies
