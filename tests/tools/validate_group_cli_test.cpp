// `clustersim validate --group-by COLUMN`: the headline rows' bias and MAPE per value of a column.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "support/json_fixture.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {
const std::string kBin = CLUSTERSIM_BINARY;
}  // namespace

TEST_CASE("validate --group-by splits every headline row, in and out of sample, into one group", "[tools][validation][cli]") {
  const auto r = testing::run_command(kBin + " validate --source DGXC --group-by gpu_type --json 2>&1");
  REQUIRE(r.exit_code == 0);
  const auto v = testing::parse_json_output(r.out);
  REQUIRE(v.contains("groups"));
  CHECK(v["groups"]["column"] == "gpu_type");
  int in_sample = 0, held_out = 0;
  bool gb200 = false, h100 = false;
  for (const auto& g : v["groups"]["values"]) {
    gb200 = gb200 || g["value"] == "GB200";
    h100 = h100 || g["value"] == "H100-SXM";
    in_sample += g["in_sample"]["count"].get<int>();
    if (!g["held_out"].is_null()) held_out += g["held_out"]["count"].get<int>();
  }
  CHECK(gb200);
  CHECK(h100);
  CHECK(in_sample == v["overall"]["headline"]["count"].get<int>());
  CHECK(held_out == v["overall"]["headline"]["lofo_count"].get<int>());
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
