// `clustersim plan` over several hardware profiles answers the same whatever order --hardware
// names them in: the whole --json, for all six orders of three profiles with one price each.
#include <catch2/catch.hpp>

#include "support/json_fixture.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using clustersim::testing::run_command;

TEST_CASE("plan --json is byte-identical for every order of the three --hardware profiles h100-sxm gb200 b200 with per-hardware prices", "[tools][plan]") {
  // A cheap question (1.3B model, sizes up to one NVL72 rack, no pipeline): still every hardware
  // is searched (GB200 in 4-GPU trays, up to 72), the fastest-per-size table holds all three at
  // 72 GPUs; the cheapest are GB200 plans of a few trays.
  const std::string question = std::string(CLUSTERSIM_BINARY) +
                               " plan --model gpt3-1.3b --tokens 3e11 --days 30 --global-batch 1152 --max-gpus 72"
                               " --fix parallelism.pp=1 --fix parallelism.cp=1 --top 8 --threads 2 --json"
                               " --cost-per-gpu-hour h100-sxm=2.5,gb200=6,b200=5.28 --hardware ";
  std::vector<std::string> hw{"b200", "gb200", "h100-sxm"};
  const auto first = run_command(question + "b200,gb200,h100-sxm 2>/dev/null");
  REQUIRE(first.exit_code == 0);
  const auto plan = clustersim::testing::parse_json_output(first.out);
  const auto& cheapest = plan["cheapest"];
  const auto& fastest = plan["fastest_per_gpu_count"];
  CHECK((clustersim::testing::has_row(cheapest, {{"hardware", "b200"}}) ||
         clustersim::testing::has_row(fastest, {{"hardware", "b200"}})));  // searched (cheapest or fastest)
  CHECK(clustersim::testing::has_row(cheapest, {{"hardware", "gb200"}, {"cluster.gpus", 4}}));
  CHECK(clustersim::testing::has_row(fastest, {{"hardware", "h100-sxm"}, {"cluster.gpus", 72}}));
  CHECK(clustersim::testing::has_row(fastest, {{"hardware", "gb200"}, {"cluster.gpus", 72}}));
  CHECK(plan["not_searched"].empty());
  int orders = 1;
  while (std::next_permutation(hw.begin(), hw.end())) {
    const std::string list = hw[0] + "," + hw[1] + "," + hw[2];
    INFO(list);
    const auto r = run_command(question + list + " 2>/dev/null");
    REQUIRE(r.exit_code == 0);
    CHECK(r.out == first.out);
    ++orders;
  }
  CHECK(orders == 6);
}

}}  // namespace CLUSTERSIM_TEST_ID
