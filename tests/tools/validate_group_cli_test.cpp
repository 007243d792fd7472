// `clustersim validate --group-by COLUMN`: the headline rows' bias and MAPE per value of a column.
#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>
#include <string>

#include "support/json_fixture.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {
const std::string kBin = CLUSTERSIM_BINARY;

// Sum of every group's `"count": N` inside the object that follows `"<part>": {`.
int summed_counts(const std::string& groups_json, const std::string& part) {
  const std::regex re("\"" + part + "\": \\{\"count\": ([0-9]+)");
  int n = 0;
  for (auto it = std::sregex_iterator(groups_json.begin(), groups_json.end(), re); it != std::sregex_iterator(); ++it)
    n += std::stoi((*it)[1]);
  return n;
}
}  // namespace

TEST_CASE("validate --group-by splits every headline row, in and out of sample, into one group", "[tools][validation][cli]") {
  const auto r = testing::run_command(kBin + " validate --source DGXC --group-by gpu_type --json 2>&1");
  REQUIRE(r.exit_code == 0);
  const auto at = r.out.find("\"groups\": {\"column\": \"gpu_type\"");
  REQUIRE(at != std::string::npos);
  const std::string groups = r.out.substr(at);
  CHECK(groups.find("\"value\": \"GB200\"") != std::string::npos);
  CHECK(groups.find("\"value\": \"H100-SXM\"") != std::string::npos);
  const double headline = testing::json_number(r.out.substr(r.out.find("\"overall\"")), "count");
  const double held_out = testing::json_number(r.out.substr(r.out.find("\"overall\"")), "lofo_count");
  CHECK(summed_counts(groups, "in_sample") == int(headline));
  CHECK(summed_counts(groups, "held_out") == int(held_out));
}

TEST_CASE("validate --group-by prints its table after the family table", "[tools][validation][cli]") {
  const auto r = testing::run_command(kBin + " validate --source DGXC-L8B --group-by precision 2>&1");
  REQUIRE(r.exit_code == 0);
  const auto families = r.out.find("Per source family"), groups = r.out.find("By precision (headline rows");
  REQUIRE(groups != std::string::npos);
  CHECK(families < groups);
  // DGXC-L8B: five BF16 and five FP8 runs.
  CHECK(std::regex_search(r.out, std::regex("\n  bf16 +5 ")));
  CHECK(std::regex_search(r.out, std::regex("\n  fp8 +5 ")));
}

TEST_CASE("validate --group-by refuses an unknown column before simulating", "[tools][validation][cli]") {
  const auto r = testing::run_command(kBin + " validate --group-by pipeline 2>&1");
  CHECK(r.exit_code == 2);
  CHECK(r.out.rfind("error: --group-by pipeline: not a column of published.csv; allowed: id, source,", 0) == 0);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  const auto s = testing::run_command(kBin + " validate --group-by pp --scenario 2>&1");
  CHECK(s.exit_code == 2);
}

}}  // namespace CLUSTERSIM_TEST_ID
