#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

struct Result {
  int code;
  std::string out;
};

Result run(const std::string& args, bool with_stderr = true) {
  const std::string cmd = std::string(CLUSTERSIM_BINARY) + " " + args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string kScenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/7b_256xh100.yaml";

}  // namespace

TEST_CASE("clustersim sweep writes CSV, shards merge back to it", "[tools][cli]") {
  const std::string dir = std::string(CLUSTERSIM_BINARY) + "_sweep_test_";
  const std::string vary = " --vary training.micro_batch=1..4 --vary training.recompute=none,full --no-progress";
  auto r = run("sweep " + kScenario + vary + " --csv " + dir + "all.csv --top 3");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("top 3 by mfu"));
  const std::string all = slurp(dir + "all.csv");
  CHECK(std::count(all.begin(), all.end(), '\n') == 1 + 6);
  REQUIRE(run("sweep " + kScenario + vary + " --shard 0/2 --csv " + dir + "s0.csv --top 0").code == 0);
  REQUIRE(run("sweep " + kScenario + vary + " --shard 1/2 --csv " + dir + "s1.csv --top 0").code == 0);
  r = run("merge " + dir + "s1.csv " + dir + "s0.csv --out " + dir + "merged.csv");
  REQUIRE(r.code == 0);
  CHECK(slurp(dir + "merged.csv") == all);
  // A missing shard is reported (exit 3), and bad input is exit 2 with one line.
  CHECK(run("merge " + dir + "s1.csv").code == 3);
  r = run("sweep " + kScenario + " --vary training.microbatch=1,2");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("did you mean 'micro_batch'"));
  CHECK(run("sweep " + kScenario + " --vary training.micro_batch=8..1").code == 2);
  for (const char* f : {"all.csv", "s0.csv", "s1.csv", "merged.csv"}) std::remove((dir + f).c_str());
}

TEST_CASE("clustersim plan finds a cluster size and plan", "[tools][cli]") {
  const std::string fix = " --fix parallelism.tp=1 --fix parallelism.pp=1 --fix parallelism.cp=1 --fix parallelism.zero_stage=1";
  auto r = run("plan --model gpt3-1.3b --tokens 3e11 --hardware h100-sxm --days 30 --seq-len 2048 --no-progress" + fix);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("cheapest plans meeting 30 days"));
  CHECK_THAT(r.out, Catch::Contains("fastest plan per GPU count"));
  r = run("plan --model gpt3-1.3b --tokens 3e11 --hardware h100-sxm --days 30 --seq-len 2048 --json --no-progress" + fix);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("\"cheapest\": [\n    {\"hardware\": \"h100-sxm\", \"cluster.gpus\": "));
  CHECK(run("plan --model gpt3-1.3b --tokens 3e11 --hardware h100-sx --days 30 --no-progress").code == 2);
  // The search skips plans by a bound that depends on what was simulated before: the answer
  // must not depend on the thread count.
  const std::string args = "plan --model gpt3-1.3b --tokens 3e11 --hardware h100-sxm,a100-80gb --days 30 --top 3 --no-progress";
  const auto one = run(args + " --threads 1" + fix, false);
  CHECK_THAT(one.out, Catch::Contains("skipped"));
  CHECK(one.out == run(args + " --threads 3" + fix, false).out);
}
