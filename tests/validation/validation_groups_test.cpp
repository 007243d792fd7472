// `validate --group-by`: residuals grouped by a column of the published-runs table.
#include <catch2/catch.hpp>

#include <string>

#include "scenarios/error.hpp"
#include "validation/validation_groups.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using studies::group_value;

TEST_CASE("parameter counts fall in 1-3-10 bins, other columns group as written", "[studies][validation]") {
  CHECK(group_value("params_b", "0.125") == "<1B");
  CHECK(group_value("params_b", "1") == "1-3B");
  CHECK(group_value("params_b", "2.99") == "1-3B");
  CHECK(group_value("params_b", "3") == "3-10B");
  CHECK(group_value("params_b", "64.862") == "30-100B");
  CHECK(group_value("params_b", "299") == "100-300B");
  CHECK(group_value("params_b", "405") == ">=300B");
  CHECK(group_value("active_params_b", "37") == "30-100B");  // published_moe.csv's columns
  CHECK(group_value("total_params_b", "671") == ">=300B");
  CHECK(group_value("params_b", "") == "(blank)");
  CHECK(group_value("pp", "") == "(blank)");
  CHECK(group_value("gpu_type", "H100-SXM") == "H100-SXM");
  CHECK(group_value("pp", "16") == "16");
}

namespace {
studies::RowOutcome outcome(const std::string& id, double error, bool simulated = true) {
  studies::RowOutcome r;
  r.id = id;
  r.simulated = simulated;
  r.error = error;
  return r;
}
}  // namespace

TEST_CASE("groups hold the headline rows only, with bias, MAPE and the held-out errors", "[studies][validation]") {
  studies::CsvTable t;
  t.columns = {"id", "pp"};
  for (auto [id, pp] : {std::pair{"A-1", ""}, {"A-2", "2"}, {"A-3", "2"}, {"A-4", "2"}, {"A-5", "10"}, {"A-6", "1"}})
    t.rows.push_back({{"id", id}, {"pp", pp}});
  studies::ValidationSummary s;
  s.rows = {outcome("A-1", 0.10), outcome("A-2", -0.20), outcome("A-3", 0.10), outcome("A-4", 0.50),
            outcome("A-5", -0.30), outcome("A-6", 0, false)};
  s.rows[3].flags = {"older release"};  // simulated but not headline: left out
  s.held_out_rows = {outcome("A-2", -0.10)};
  const studies::ResidualGroups g = studies::group_residuals(t, "t.csv", s, "pp");
  CHECK(g.column == "pp");
  REQUIRE(g.groups.size() == 3);  // A-6 was not simulated: no "1" group
  // "(blank)" first, then numerically: 2 before 10.
  CHECK(g.groups[0].value == "(blank)");
  CHECK(g.groups[1].value == "2");
  CHECK(g.groups[2].value == "10");
  const auto& two = g.groups[1];
  CHECK(two.in_sample.count == 2);
  CHECK(two.in_sample.bias == Approx(-0.05));
  CHECK(two.in_sample.mape == Approx(0.15));
  CHECK(two.in_sample.worst_id == "A-2");
  REQUIRE(two.held_out);
  CHECK(two.held_out->count == 1);
  CHECK(two.held_out->bias == Approx(-0.10));
  CHECK_FALSE(g.groups[0].held_out);
}

TEST_CASE("an unknown --group-by column names the table and the allowed columns", "[studies][validation]") {
  studies::CsvTable t;
  t.columns = {"id", "pp", "gpu_type"};
  try {
    studies::group_residuals(t, "published.csv", {}, "pipeline");
    FAIL("accepted an unknown column");
  } catch (const scenarios::ScenarioError& e) {
    CHECK(std::string(e.what()) == "--group-by pipeline: not a column of published.csv; allowed: id, pp, gpu_type");
  }
}

}}  // namespace CLUSTERSIM_TEST_ID
