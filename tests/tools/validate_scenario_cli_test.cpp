// `clustersim validate --scenario`: a published row as the scenario a user can run and explain.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "support/published_rows.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"
#include "validation/conventions.hpp"
#include "studies/csv_table.hpp"
#include "validation/validation.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {
const std::string kBin = CLUSTERSIM_BINARY;

const std::map<std::string, std::string>& published_row(const std::string& id) {
  static const studies::CsvTable table = studies::parse_csv(studies::published_csv_text(), "published.csv");
  return testing::row_with_id(table, id);
}
}  // namespace

TEST_CASE("validate --scenario prints YAML that runs to the row's own prediction", "[tools][validation][cli]") {
  for (const char* id : {"LLMFOUNDRY-210", "DGXC-L70B-001", "MEG-SC21T2-007"}) {
    INFO(id);
    const auto r = testing::run_command(kBin + " validate --source " + id + " --scenario 2>&1");
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.rfind(std::string("# ") + id + "\n", 0) == 0);
    const scenarios::Report printed = scenarios::simulate(scenarios::load_scenario_string(r.out, id));
    const studies::RowOutcome row = studies::validate_row(published_row(id));
    REQUIRE(row.simulated);
    CHECK(printed.tokens_per_s_per_gpu == Approx(row.predicted_tps_gpu).epsilon(1e-12));
  }
}

TEST_CASE("validate --scenario lists a row it cannot simulate with the reason, and rejects an unknown prefix",
          "[tools][validation][cli]") {
  const auto skipped = testing::run_command(kBin + " validate --source KORTH-010 --scenario 2>&1");
  CHECK(skipped.exit_code == 0);
  CHECK_THAT(skipped.out, Catch::StartsWith("# KORTH-010: not simulated: no measured tokens/s"));
  const auto unknown = testing::run_command(kBin + " validate --source NO-SUCH-ROW --scenario 2>&1");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.out == "error: published.csv: no row id starts with 'NO-SUCH-ROW'\n");
  const auto unknown_validate = testing::run_command(kBin + " validate --source NO-SUCH-ROW 2>&1");
  CHECK(unknown_validate.exit_code == 2);
  CHECK(unknown_validate.out == "error: published.csv: no row id starts with 'NO-SUCH-ROW'\n");  // the file is named
  const auto with_json = testing::run_command(kBin + " validate --scenario --json 2>&1");
  CHECK(with_json.exit_code != 0);
  CHECK_THAT(with_json.out, Catch::Contains("excludes"));
}

}}  // namespace CLUSTERSIM_TEST_ID
