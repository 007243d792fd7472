#include "validation/validation_groups.hpp"

#include "scenarios/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <map>

namespace clustersim::studies {

namespace {

// A group's label and the number it sorts by (a bin's lower edge, a numeric field itself, -1 for
// "(blank)"); no key when the field is not a number.
struct Bin {
  std::string label;
  std::optional<double> key;
};

std::optional<double> number(const std::string& field) {
  char* end = nullptr;
  const double x = std::strtod(field.c_str(), &end);
  if (end == field.c_str()) return std::nullopt;
  return x;
}

Bin bin_of(const std::string& column, const std::string& field) {
  if (field.empty()) return {"(blank)", -1.0};
  const std::optional<double> x = number(field);
  if (!binned_group_column(column) || !x) return {field, x};
  static const double edges[] = {1, 3, 10, 30, 100, 300};
  if (*x < edges[0]) return {"<1B", 0.0};
  for (std::size_t i = 1; i < std::size(edges); ++i)
    if (*x < edges[i]) return {fmt::format("{:g}-{:g}B", edges[i - 1], edges[i]), edges[i - 1]};
  return {fmt::format(">={:g}B", edges[std::size(edges) - 1]), edges[std::size(edges) - 1]};
}

}  // namespace

// params_b (published.csv), total_params_b and active_params_b (published_moe.csv).
bool binned_group_column(const std::string& column) {
  const std::string suffix = "params_b";
  return column.size() >= suffix.size() && column.compare(column.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string group_value(const std::string& column, const std::string& field) { return bin_of(column, field).label; }

void check_group_column(const CsvTable& table, const std::string& table_name, const std::string& column) {
  if (std::find(table.columns.begin(), table.columns.end(), column) != table.columns.end()) return;
  throw scenarios::ScenarioError(fmt::format("--group-by {}: not a column of {}; allowed: {}", column, table_name,
                                             fmt::join(table.columns, ", ")));
}

ResidualGroups group_residuals(const CsvTable& table, const std::string& table_name, const ValidationSummary& s,
                               const std::string& column) {
  check_group_column(table, table_name, column);
  std::map<std::string, Bin> bin_of_id;
  for (const auto& row : table.rows) {
    const auto id = row.find("id"), field = row.find(column);
    if (id != row.end()) bin_of_id[id->second] = bin_of(column, field == row.end() ? "" : field->second);
  }
  std::map<std::string, std::vector<const RowOutcome*>> in, out;
  std::map<std::string, std::optional<double>> key_of;
  for (const auto& r : s.rows)
    if (r.headline()) {
      const Bin& b = bin_of_id[r.id];
      in[b.label].push_back(&r);
      key_of[b.label] = b.key;
    }
  for (const auto& r : s.held_out_rows) out[bin_of_id[r.id].label].push_back(&r);
  std::vector<GroupSummary> groups;
  for (const auto& [value, rows] : in) {
    GroupSummary g{value, error_stats(rows), std::nullopt};
    if (auto it = out.find(value); it != out.end()) g.held_out = error_stats(it->second);
    groups.push_back(std::move(g));
  }
  const bool numeric = std::all_of(key_of.begin(), key_of.end(), [](const auto& k) { return k.second.has_value(); });
  if (numeric)
    std::stable_sort(groups.begin(), groups.end(), [&](const GroupSummary& a, const GroupSummary& b) {
      return *key_of.at(a.value) < *key_of.at(b.value);
    });
  return {column, std::move(groups)};
}

}  // namespace clustersim::studies
