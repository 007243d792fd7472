#include <catch2/catch.hpp>

#include <algorithm>

#include "studies/metrics.hpp"
#include "studies/sweep_table.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using namespace clustersim::studies;

TEST_CASE("the JSON and CSV writers carry the same typed metrics", "[studies][metrics]") {
  const auto r = testing::run_main_scenario();
  const auto metrics = report_metrics(r);
  // Parsing the pretty JSON back gives every metric, in order, with the CSV cell's text.
  const auto flat = flatten_json(metrics_json(metrics));
  REQUIRE(flat.size() == metrics.size());
  for (std::size_t i = 0; i < flat.size(); ++i) {
    CHECK(flat[i].first == metrics[i].key);
    CHECK(flat[i].second == metrics[i].cell());
  }
  CHECK(Json::parse(metrics_json(metrics)) == Json::parse(metrics_json_compact(metrics)));
  CHECK(metrics_json_compact(metrics).find('\n') == std::string::npos);
  const auto cells = metric_cells(metrics);
  REQUIRE(cells.size() == metric_columns().size());
  const auto at = [&](const char* key) {
    return cells[std::size_t(std::find(metric_columns().begin(), metric_columns().end(), key) - metric_columns().begin())];
  };
  CHECK(std::stod(at("step_time_s")) == Approx(r.step_time_s));
  CHECK(at("fits_in_memory") == "true");
}

TEST_CASE("metrics carry their units", "[studies][metrics]") {
  const auto metrics = report_metrics(testing::run_main_scenario());
  auto unit_of = [&](const std::string& key) {
    for (const auto& m : metrics)
      if (m.key == key) return m.unit;
    FAIL("no metric " << key);
    return units::Unit::none;
  };
  CHECK(unit_of("step_time_s") == units::Unit::seconds);
  CHECK(unit_of("peak_memory_bytes") == units::Unit::bytes);
  CHECK(unit_of("flops_per_token") == units::Unit::flop);
  CHECK(unit_of("peak_flops_per_gpu") == units::Unit::flop_per_s);
  CHECK(unit_of("memory.weights_bytes") == units::Unit::bytes);
  // Every key that names a unit by its suffix carries that unit.
  for (const auto& m : metrics) {
    INFO(m.key);
    const bool per_s = m.key.size() > 6 && m.key.substr(m.key.size() - 6) == "_per_s";
    if (m.key.size() > 2 && m.key.substr(m.key.size() - 2) == "_s" && !per_s) CHECK(m.unit == units::Unit::seconds);
    if (m.key.find("_bytes") != std::string::npos) CHECK(m.unit == units::Unit::bytes);
  }
}

TEST_CASE("a Monte Carlo summary does not blank the CSV metrics", "[studies][metrics]") {
  // Before the typed list, an optional group shifted the flattened columns and the sweep wrote
  // empty metric cells for such rows.
  auto r = testing::run_main_scenario();
  r.monte_carlo.runs = 10;
  const auto cells = metric_cells(report_metrics(r));
  CHECK(std::all_of(cells.begin(), cells.end(), [](const std::string& c) { return !c.empty(); }));
}

}}  // namespace CLUSTERSIM_TEST_ID
