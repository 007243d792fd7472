#pragma once
// The typed metrics of a run report: one ordered list of (key, unit, value) derived once from
// scenarios::Report. Every output format is written from this list (the `run --json` object,
// the sweep's CSV columns and JSON lines), so a metric added here appears in all of them.
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "scenarios/simulate.hpp"
#include "studies/json_value.hpp"
#include "units/units.hpp"

namespace clustersim::studies {

struct Metric {
  std::string key;  ///< dotted path: "breakdown.forward_s" is member forward_s of object breakdown
  units::Unit unit = units::Unit::none;
  std::variant<double, bool, std::string, Json> value;  ///< Json: an array or object

  Metric(std::string k, units::Unit u, double v) : key(std::move(k)), unit(u), value(v) {}
  template <int B, int S, int F>
  Metric(std::string k, units::Quantity<B, S, F> q) : key(std::move(k)), unit(units::unit_of<units::Quantity<B, S, F>>()), value(q.si()) {}
  Metric(std::string k, bool v) : key(std::move(k)), value(v) {}
  Metric(std::string k, std::string v) : key(std::move(k)), value(std::move(v)) {}
  Metric(std::string k, const char* v) : key(std::move(k)), value(std::string(v)) {}
  Metric(std::string k, Json v) : key(std::move(k)), value(std::move(v)) {}

  /// The value as a CSV cell: numbers as in JSON, strings unquoted, booleans true/false.
  std::string cell() const;
  /// The value as a JSON value.
  Json json() const;
};

/// Every metric of a report, in output order. Optional groups (the Monte Carlo summary) appear
/// only when present.
std::vector<Metric> report_metrics(const scenarios::Report& r);

/// The metric keys that every report has (the CSV metric columns), in output order.
const std::vector<std::string>& metric_columns();

/// The metrics as one JSON object, nested by the dotted keys; `extra` members are appended at the
/// top level.
Json metrics_object(const std::vector<Metric>& metrics, const std::vector<std::pair<std::string, Json>>& extra = {});
/// metrics_object as pretty text (two-space indent, one member per line, a final newline).
std::string metrics_json(const std::vector<Metric>& metrics,
                         const std::vector<std::pair<std::string, Json>>& extra = {});
/// The same object on one line without insignificant whitespace.
std::string metrics_json_compact(const std::vector<Metric>& metrics);
/// One cell per metric_columns() entry ("" where the report lacks it).
std::vector<std::string> metric_cells(const std::vector<Metric>& metrics);

}  // namespace clustersim::studies
