// `clustersim plan` tables for an MoE model carry the expert layout (ep, etp) of each plan; a
// dense model's tables keep their columns.
#include <catch2/catch.hpp>

#include "support/json_fixture.hpp"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using clustersim::testing::run_command;

namespace {

const std::string kBin = CLUSTERSIM_BINARY;

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The first table header line ("# index hardware ...") of `plan` text output, split in words.
std::vector<std::string> plan_header(const std::string& args) {
  const auto r = run_command(kBin + " plan " + args + " --top 3 --threads 1 --no-progress 2>/dev/null");
  INFO(args << "\n" << r.out);
  REQUIRE(r.exit_code == 0);
  const auto at = r.out.find("# index");
  REQUIRE(at != std::string::npos);
  return words(r.out.substr(at, r.out.find('\n', at) - at));
}

}  // namespace

TEST_CASE("plan tables print ep and etp for an MoE model, a dense model's columns as before", "[tools][plan][moe]") {
  const std::string small = " --tokens 1e11 --days 30 --max-gpus 32 --gpu-step 16 --fix parallelism.pp=1"
                            " --fix parallelism.cp=1 --fix parallelism.tp=1 --fix training.micro_batch=1";
  const std::vector<std::string> dense = {"#", "index", "hardware", "gpus", "tp", "pp", "cp", "dp", "vpp", "schedule",
                                          "micro_batch", "zero_stage", "recompute", "energy_mwh", "total_cost_usd",
                                          "MFU", "%", "step", "s", "days", "GPU-hours", "cost", "$", "mem", "GiB"};
  CHECK(plan_header("--model gpt3-1.3b" + small) == dense);
  std::vector<std::string> moe = dense;
  moe.insert(moe.begin() + 8, {"ep", "etp"});
  CHECK(plan_header("--model gpt-oss-20b" + small) == moe);
  const auto json = run_command(kBin + " plan --model gpt-oss-20b" + small + " --top 3 --threads 1 --json 2>/dev/null");
  REQUIRE(json.exit_code == 0);
  // ep and etp come after dp, before vpp, in every row (the members in the order written).
  const auto plan = clustersim::testing::parse_json_output(json.out);
  REQUIRE(!plan["cheapest"].empty());
  for (const auto& row : plan["cheapest"]) {
    std::vector<std::string> keys;
    for (const auto& [k, v] : row.items()) keys.push_back(k);
    const auto at = std::find(keys.begin(), keys.end(), "dp");
    REQUIRE(keys.end() - at >= 4);
    CHECK(std::vector<std::string>(at, at + 4) ==
          std::vector<std::string>{"dp", "parallelism.ep", "parallelism.etp", "parallelism.vpp"});
  }
  CHECK(clustersim::testing::has_row(plan["cheapest"], {{"dp", 16}, {"parallelism.etp", 1}}));
  const auto dense_json = run_command(kBin + " plan --model gpt3-1.3b" + small + " --top 3 --threads 1 --json 2>/dev/null");
  REQUIRE(dense_json.exit_code == 0);
  CHECK(dense_json.out.find("parallelism.ep") == std::string::npos);
}

TEST_CASE("sweep --auto-parallel --top prints ep and etp for an MoE scenario", "[tools][sweep][moe]") {
  const auto r = run_command(kBin + " sweep " + std::string(CLUSTERSIM_SOURCE_DIR) +
                             "/scenarios/gpt_oss_120b_64xh100.yaml --auto-parallel --shard 0/512 --threads 1 --top 2"
                             " --no-progress 2>/dev/null");
  REQUIRE(r.exit_code == 0);
  const auto at = r.out.find("# index");
  REQUIRE(at != std::string::npos);
  const auto header = words(r.out.substr(at, r.out.find('\n', at) - at));
  CHECK(std::find(header.begin(), header.end(), "ep") != header.end());
  CHECK(std::find(header.begin(), header.end(), "etp") != header.end());
}

}}  // namespace CLUSTERSIM_TEST_ID
