#include <catch2/catch.hpp>

#include <sstream>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "validation/conventions.hpp"
#include "studies/error_band.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {
const std::string kSrc = CLUSTERSIM_SOURCE_DIR;
}  // namespace

// The committed table's check against a fresh regeneration shares the leave-one-family-out pass of
// tests/validation/published_runs_test.cpp (the suite's most expensive computation), so it lives there.

TEST_CASE("error_band widens with confidence and names its basis", "[error_band]") {
  const auto sc = scenarios::load_scenario_file(kSrc + "/scenarios/70b_512xh100_tp8pp4.yaml");
  const auto c = studies::band_class(sc);
  CHECK(c.hardware == "H100-class");
  CHECK(c.style == "pipeline");
  CHECK(c.scale == "15B-150B");
  const auto b68 = studies::error_band(sc, 0.68), b90 = studies::error_band(sc, 0.9);
  CHECK(b68.low < b68.high);
  CHECK(b90.low < b68.low);
  CHECK(b90.high > b68.high);
  CHECK(b68.rows >= studies::kMinBandRows);
  CHECK(b68.basis == "H100-class, pipeline, 15B-150B");
  REQUIRE_THROWS_AS(studies::error_band(sc, 1.0), scenarios::ScenarioError);
  REQUIRE_THROWS_AS(studies::error_band(sc, 0.0), scenarios::ScenarioError);
}

TEST_CASE("error_band widens to a broader class when the narrow one has few rows", "[error_band]") {
  // 175B on A100 with tp/pp: "A100-class, pipeline, over 150B" (16 rows) is used as is; the same
  // model with ZeRO-3 and no pipeline has only a handful of published rows at that scale.
  auto sc = scenarios::load_scenario_file(kSrc + "/scenarios/175b_1024xa100.yaml");
  sc.parallel.pp = 1;
  sc.parallel.tp = 1;
  sc.parallel.zero_stage = 3;
  const auto b = studies::error_band(sc, 0.68);
  CHECK(b.rows >= studies::kMinBandRows);
  CHECK(b.basis.find("A100-class") != std::string::npos);
  CHECK(b.basis.rfind("A100-class, ZeRO-3/FSDP;", 0) == 0);  // widened past the model scale ...
  CHECK_THAT(b.basis, Catch::Contains("published rows are A100-class, ZeRO-3/FSDP, over 150B"));  // ... and says so
}

}}  // namespace CLUSTERSIM_TEST_ID
