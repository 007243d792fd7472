#include "studies/validation_groups.hpp"

#include "scenarios/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>

namespace clustersim::studies {

namespace {

GroupStats group_stats(const std::vector<const RowOutcome*>& rows) {
  GroupStats g;
  g.errors = error_stats(rows);
  for (const RowOutcome* r : rows) g.bias += r->error;
  if (!rows.empty()) g.bias /= double(rows.size());
  return g;
}

// The number a value sorts by: the field itself, or a bin's lower edge ("3-10B" -> 3, "<1B" -> 0).
std::optional<double> sort_key(const std::string& value) {
  if (value.rfind("<", 0) == 0) return 0.0;
  const std::string digits = value.rfind(">=", 0) == 0 ? value.substr(2) : value;
  char* end = nullptr;
  const double x = std::strtod(digits.c_str(), &end);
  if (end == digits.c_str()) return std::nullopt;
  return x;
}

std::string allowed_columns(const CsvTable& table) {
  std::string out;
  for (const auto& c : table.columns) out += (out.empty() ? "" : ", ") + c;
  return out;
}

}  // namespace

// params_b (published.csv), total_params_b and active_params_b (published_moe.csv).
bool binned_group_column(const std::string& column) {
  const std::string suffix = "params_b";
  return column.size() >= suffix.size() && column.compare(column.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string group_value(const std::string& column, const std::string& field) {
  if (field.empty()) return "(blank)";
  if (!binned_group_column(column)) return field;
  char* end = nullptr;
  const double b = std::strtod(field.c_str(), &end);
  if (end == field.c_str()) return field;
  static const double edges[] = {1, 3, 10, 30, 100, 300};
  if (b < edges[0]) return "<1B";
  for (std::size_t i = 1; i < std::size(edges); ++i)
    if (b < edges[i]) return fmt::format("{:g}-{:g}B", edges[i - 1], edges[i]);
  return fmt::format(">={:g}B", edges[std::size(edges) - 1]);
}

ResidualGroups group_residuals(const CsvTable& table, const std::string& table_name,
                                          const ValidationSummary& s, const std::string& column) {
  if (std::find(table.columns.begin(), table.columns.end(), column) == table.columns.end())
    throw scenarios::ScenarioError(fmt::format("--group-by {}: not a column of {}; allowed: {}", column, table_name,
                                               allowed_columns(table)));
  std::map<std::string, std::string> value_of;  // row id -> its group
  for (const auto& row : table.rows) {
    const auto id = row.find("id"), field = row.find(column);
    if (id != row.end()) value_of[id->second] = group_value(column, field == row.end() ? "" : field->second);
  }
  std::map<std::string, std::vector<const RowOutcome*>> in, out;
  for (const auto& r : s.rows)
    if (r.headline()) in[value_of[r.id]].push_back(&r);
  for (const auto& r : s.held_out_rows) out[value_of[r.id]].push_back(&r);
  std::vector<GroupSummary> groups;
  for (const auto& [value, rows] : in) {
    GroupSummary g{value, group_stats(rows), std::nullopt};
    if (auto it = out.find(value); it != out.end()) g.held_out = group_stats(it->second);
    groups.push_back(std::move(g));
  }
  const bool numeric = std::all_of(groups.begin(), groups.end(), [](const GroupSummary& g) {
    return g.value == "(blank)" || sort_key(g.value).has_value();
  });
  if (numeric)
    std::stable_sort(groups.begin(), groups.end(), [](const GroupSummary& a, const GroupSummary& b) {
      const double x = a.value == "(blank)" ? -1 : *sort_key(a.value), y = b.value == "(blank)" ? -1 : *sort_key(b.value);
      return x < y;
    });
  return {column, std::move(groups)};
}

}  // namespace clustersim::studies
