// Regression guard on the accuracy against the published runs (issue #5). The bar is the figure
// measured when this test was last updated, plus a small margin: a change that makes the
// predictions worse, or that silently drops rows from the simulated set, fails here.
// The target is MAPE <= 10 %; the gap is stated in the test name.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "tools/validation.hpp"

using namespace clustersim::tools;

namespace {
constexpr double kMaxHeadlineMape = 0.133;  // measured 0.128 on 287 rows on 2026-12-01 (one fitted scalar per profile)
constexpr int kMinHeadlineRows = 287;
}  // namespace

TEST_CASE("published runs: headline MAPE <= 13.3% (measured 12.8% on 287 rows, leave-one-family-out 13.6%)", "[validation]") {
  const ValidationSummary s = validate_table(read_csv_file(CLUSTERSIM_SOURCE_DIR "/tests/validation/published.csv"));
  REQUIRE(s.rows.size() == 346);
  INFO("headline rows " << s.overall.headline.count << ", MAPE " << 100 * s.overall.headline.mape << "%, worst "
                        << 100 * s.overall.headline.worst << "% (" << s.overall.headline.worst_id << ")");
  CHECK(s.overall.headline.count >= kMinHeadlineRows);
  CHECK(s.overall.headline.mape <= kMaxHeadlineMape);
  // Every row is accounted for: simulated, or listed with a reason.
  for (const auto& r : s.rows) {
    INFO(r.id);
    CHECK((r.simulated || !r.reason.empty()));
  }
}

TEST_CASE("clustersim validate prints the table and writes the SVG plot", "[validation][cli]") {
  const std::string svg = "validate_test_plot.svg";
  const std::string out = "validate_test_out.txt";
  const std::string cmd = std::string("\"") + CLUSTERSIM_BINARY + "\" validate --source MBRIDGE --plot " + svg + " > " + out;
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ifstream t(out), p(svg);
  std::stringstream text, plot;
  text << t.rdbuf();
  plot << p.rdbuf();
  CHECK_THAT(text.str(), Catch::Contains("MBRIDGE-016"));
  CHECK_THAT(text.str(), Catch::Contains("overall"));
  CHECK_THAT(text.str(), Catch::Contains("NOT SIMULATED"));
  CHECK_THAT(plot.str(), Catch::StartsWith("<svg"));
  CHECK_THAT(plot.str(), Catch::Contains("stroke-dasharray"));  // the y = x line
  const std::string bad = std::string("\"") + CLUSTERSIM_BINARY + "\" validate --source NO-SUCH-FAMILY > /dev/null 2>&1";
  CHECK(WEXITSTATUS(std::system(bad.c_str())) == 2);
  std::remove(svg.c_str());
  std::remove(out.c_str());
}

// The second bar. Families above it are reported by this test's output (it may fail
// without failing the suite, so the gap stays visible): on 2026-11-30 IBMFSDP (16.0 %) and
// MEG-SC21T2 (19.2 %) were above it.
TEST_CASE("issue #5 target: every source family's median |error| <= 15%", "[validation][!mayfail]") {
  const ValidationSummary s = validate_table(read_csv_file(CLUSTERSIM_SOURCE_DIR "/tests/validation/published.csv"));
  for (const auto& f : s.families) {
    if (f.headline.count == 0) continue;
    INFO(f.family << ": median " << 100 * f.headline.median_abs << "%, MAPE " << 100 * f.headline.mape << "%, worst "
                  << 100 * f.headline.worst << "% (" << f.headline.worst_id << ")");
    CHECK(f.headline.median_abs <= 0.15);
  }
}
