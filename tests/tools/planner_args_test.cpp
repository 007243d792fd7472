// Command-line values that make no sense are one-line errors (exit 2), not silent defaults or
// nonsense output (issue 16, item 8).
#include <catch2/catch.hpp>

#include <algorithm>

#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using clustersim::testing::run_command;

namespace {

const std::string kBin = CLUSTERSIM_BINARY;
const std::string kMain = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/7b_256xh100.yaml";

}  // namespace

TEST_CASE("nonsense option values are rejected with one line and exit code 2", "[tools][bad-input]") {
  const std::string plan = " plan --model llama3-8b --tokens 1e12 --days 30 --no-progress";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" run " + kMain + " --monte-carlo 2 --seed -1", "--seed"},
      {plan + " --threads -3", "--threads"},
      {plan + " --gpu-step 0", "--gpu-step"},
      {" plan --model llama3-8b --tokens 1e12 --days 0 --no-progress", "--days"},
      {" sweep " + kMain + " --vary training.micro_batch=1,2 --threads -3 --no-progress", "--threads"},
      {plan + " --schedules zb", "--schedules zb: unknown schedule 'zb'; allowed: 1f1b, gpipe, interleaved, zb-h1"},
      {plan + " --schedules 1f1b,1f1b", "--schedules"},
      {plan + " --schedules ''", "--schedules"},
      {" sweep " + kMain + " --auto-parallel --schedules 1f1b,zbh1 --no-progress", "unknown schedule 'zbh1'"},
      {" sweep " + kMain + " --vary training.micro_batch=1,2 --schedules zb-h1 --no-progress", "--auto-parallel"},
      {" sweep " + kMain + " --auto-parallel --set parallelism.schedule=zb --no-progress", "parallelism.schedule=zb"},
  };
  for (const auto& [args, option] : cases) {
    const auto r = run_command(kBin + args + " 2>&1 >/dev/null");
    INFO(args << "\n  message: " << r.out);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    CHECK(r.out.find(option) != std::string::npos);
  }
}

TEST_CASE("a deadline no cluster can meet is an error, not a negative GPU count", "[tools][bad-input]") {
  const auto r = run_command(kBin + " plan --model llama3-8b --tokens 1e12 --days 1e-9 --no-progress 2>&1");
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("error: --days 1e-09") != std::string::npos);
  CHECK(r.out.find("at most 10000000") != std::string::npos);
  CHECK(r.out.find("-2147483648") == std::string::npos);
}

TEST_CASE("an unknown subcommand names the ones that exist", "[tools][bad-input]") {
  const auto r = run_command(kBin + " rnu " + kMain + " 2>&1");
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("unknown subcommand 'rnu'") != std::string::npos);
  for (const char* sub : {"run", "sweep", "plan", "validate"}) CHECK(r.out.find(sub) != std::string::npos);
}

TEST_CASE("a sweep with no ok configuration exits non-zero", "[tools][sweep]") {
  // micro_batch 3 divides no replica's 4 sequences (1024 over dp 256): every row is invalid.
  const auto bad = run_command(kBin + " sweep " + kMain + " --vary training.micro_batch=3 --no-progress 2>&1");
  INFO(bad.out);
  CHECK(bad.exit_code == 3);
  CHECK(bad.out.find("none of the 1 configurations is ok") != std::string::npos);
  CHECK(run_command(kBin + " sweep " + kMain + " --vary training.micro_batch=3,1 --no-progress >/dev/null 2>&1").exit_code == 0);
}

}}  // namespace CLUSTERSIM_TEST_ID
