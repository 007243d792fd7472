// The held-out split by source and date (validation/holdout_split.hpp): every shipped row is
// dated, the split holds the sources it says it holds, and the calibration never sees it.
#include <catch2/catch.hpp>

#include "validation/calibrate.hpp"
#include "validation/conventions.hpp"
#include "validation/holdout_split.hpp"
#include "support/published_rows.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::studies;

using clustersim::testing::row_with_id;

TEST_CASE("held-out split: every published row, dense and MoE, has its source's date", "[validation][holdout]") {
  for (const char* text : {published_csv_text(), published_moe_csv_text()})
    for (const auto& r : parse_csv(text, "published").rows) {
      INFO(r.at("id") << ": " << r.at("source"));
      CHECK(source_published(r).has_value());
    }
}

TEST_CASE("held-out split: the newest sources by date, per table", "[validation][holdout]") {
  const CsvTable dense = parse_csv(published_csv_text(), "published.csv");
  const CsvTable moe = parse_csv(published_moe_csv_text(), "published_moe.csv");
  CHECK(in_holdout_split(row_with_id(dense, "MBRIDGE-001")));
  CHECK(in_holdout_split(row_with_id(dense, "DGXC-L405B25-001")));
  CHECK(in_holdout_split(row_with_id(dense, "TORCHTITAN-019")));    // asyncTP tables, Jun 2025
  CHECK_FALSE(in_holdout_split(row_with_id(dense, "TORCHTITAN-001")));  // Dec 2024, same family
  CHECK_FALSE(in_holdout_split(row_with_id(dense, "DGXC-L405B-001")));  // v24.11.1
  CHECK_FALSE(in_holdout_split(row_with_id(dense, "MEG-SC21-001")));
  CHECK(source_published(row_with_id(dense, "TORCHTITAN-033")) == "2024-08");
  CHECK(in_holdout_split(row_with_id(moe, "MOE-MBRIDGE-001")));        // 26.08
  CHECK(in_holdout_split(row_with_id(moe, "MOE-MBRIDGE-019")));        // 26.06.01
  CHECK_FALSE(in_holdout_split(row_with_id(moe, "MOE-MBRIDGE-163")));  // 25.11
  CHECK_FALSE(in_holdout_split(row_with_id(moe, "MOE-DSREPORT-001")));
  CHECK(holdout_from("MOE-MBRIDGE-001") == "2026-06");
  CHECK(holdout_from("MBRIDGE-001") == "2025-05");
  // A user's own table (no dated source) is never in the split.
  CHECK_FALSE(in_holdout_split({{"id", "MYRUNS-001"}, {"source", "our cluster"}}));
}

TEST_CASE("held-out split: the calibration never fits on it (its measurements cannot move a constant)", "[validation][holdout]") {
  const CsvTable table = parse_csv(published_csv_text(), kPublishedCsvPath);
  const CalibrationResult base = calibrate(table);
  REQUIRE(base.holdout_rows > 0);
  auto scaled = [&](bool holdout, double factor) {
    CsvTable t = table;
    for (auto& r : t.rows)
      if (in_holdout_split(r) == holdout && !r.at("measured_tps_gpu").empty())
        r["measured_tps_gpu"] = std::to_string(factor * std::stod(r.at("measured_tps_gpu")));
    return calibrate(t);
  };
  const CalibrationResult split_moved = scaled(true, 1.5);
  CHECK(split_moved.rows == base.rows);
  CHECK(split_moved.global.values == base.global.values);
  for (const auto& [mode, fit] : base.modes)
    for (const auto& [hw, v] : fit.values) CHECK(split_moved.modes.at(mode).values.at(hw).values == v.values);
  // The split's own error does move: the rows are predicted, only not fitted on.
  CHECK(split_moved.modes.at(base.best_mode()).holdout_split.mape != base.modes.at(base.best_mode()).holdout_split.mape);
  // The tuning rows do move the fit (the check above can fail): measured 30 % slower, fitted lower.
  CHECK(scaled(false, 0.7).global.values[0] < 0.85 * base.global.values[0]);
}

}}  // namespace CLUSTERSIM_TEST_ID
