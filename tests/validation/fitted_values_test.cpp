// The shipped hardware/fitted.yaml is what a fresh calibration on the checked-out tree writes
// (issue 30 item 6): a model change that moves the fit fails here until
// `clustersim calibrate --write-source-tree` is rerun and its file committed.
#include <catch2/catch.hpp>

#include <cmath>

#include "scenarios/fitted.hpp"
#include "validation/calibrate.hpp"
#include "validation/conventions.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using namespace clustersim::studies;

namespace {
void check_values(const std::map<std::string, scenarios::FittedValue>& shipped,
                  const std::map<std::string, scenarios::FittedValue>& fresh) {
  REQUIRE(shipped.size() == fresh.size());
  for (const auto& [key, v] : fresh) {
    INFO(key << ": shipped " << shipped.at(key).value << " (fit " << shipped.at(key).fit << "), fresh fit " << v.fit);
    CHECK(std::abs(shipped.at(key).value - v.fit) <= 0.005);
    CHECK(std::abs(shipped.at(key).fit - v.fit) <= 0.005);
  }
}
}  // namespace

TEST_CASE("shipped fitted constants: hardware/fitted.yaml equals a fresh fit of the published runs (within 0.005)", "[validation][calibrate]") {
  const CalibrationResult r = calibrate(parse_csv(published_csv_text(), kPublishedCsvPath));
  const FitMode mode = r.best_mode();
  const auto fresh = scenarios::parse_fitted_yaml(fitted_yaml(r, mode, scenarios::shipped_profile_dies(), {"today", "HEAD", kPublishedCsvPath}), "fresh");
  const auto& shipped = scenarios::fitted_table();
  CHECK(shipped.source == kPublishedCsvPath);
  CHECK(shipped.mode == fresh.mode);
  CHECK(shipped.rows == fresh.rows);
  CHECK(shipped.out_of_sample_mape == Approx(fresh.out_of_sample_mape).margin(0.0005));
  CHECK(shipped.holdout_rows == fresh.holdout_rows);
  CHECK(shipped.holdout_split_mape == Approx(fresh.holdout_split_mape).margin(0.0005));
  check_values(shipped.global, fresh.global);
  REQUIRE(shipped.dies.size() == fresh.dies.size());
  for (const auto& [die, f] : fresh.dies) {
    INFO("die " << die);
    REQUIRE(shipped.dies.count(die) == 1);
    CHECK(shipped.dies.at(die).rows == f.rows);
    CHECK(shipped.dies.at(die).profiles == f.profiles);
    check_values(shipped.dies.at(die).values, f.values);
  }
}

}}  // namespace CLUSTERSIM_TEST_ID
