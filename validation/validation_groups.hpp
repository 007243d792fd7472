#pragma once
// Validation residuals grouped by one column of the published-runs table (`validate --group-by`):
// a systematic bias (pipeline runs too slow, one GPU too fast) shows as a group whose mean signed
// error is far from zero, which the per-family MAPE hides.
#include <optional>
#include <string>
#include <vector>

#include "studies/csv_table.hpp"
#include "validation/validation.hpp"

namespace clustersim::studies {

struct GroupSummary {
  std::string value;                  ///< the column's value, binned for params_b; "(blank)" when empty
  ErrorStats in_sample;                ///< the profiles' written constants (bias: mean signed error)
  std::optional<ErrorStats> held_out;  ///< the same rows, each predicted without its family
};

/// The groups of one column, in the order group_residuals() sorts them.
struct ResidualGroups {
  std::string column;
  std::vector<GroupSummary> groups;
};

/// Columns whose values are binned rather than taken as written: the parameter counts (*params_b).
bool binned_group_column(const std::string& column);

/// The group a row's field falls in: parameter counts by 1-3-10 steps ("3-10B"), else the field as written.
std::string group_value(const std::string& column, const std::string& field);

/// Throws scenarios::ScenarioError naming `table_name` and the allowed columns when `column` is
/// not one of `table`'s.
void check_group_column(const CsvTable& table, const std::string& table_name, const std::string& column);

/// The headline rows of `s` (and, when computed, its held-out rows) grouped by `column` of
/// `table`, sorted by value (numerically when every value is a number or a bin); checks the
/// column first (check_group_column).
ResidualGroups group_residuals(const CsvTable& table, const std::string& table_name, const ValidationSummary& s,
                               const std::string& column);

}  // namespace clustersim::studies
