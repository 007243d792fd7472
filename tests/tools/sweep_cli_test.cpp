#include <catch2/catch.hpp>

#include "support/json_fixture.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace { namespace CLUSTERSIM_TEST_ID {

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
  const auto plan = clustersim::testing::parse_json_output(r.out);
  REQUIRE(!plan["cheapest"].empty());
  CHECK(plan["cheapest"][0]["hardware"] == "h100-sxm");
  CHECK(plan["cheapest"][0].begin().key() == "hardware");
  CHECK(std::next(plan["cheapest"][0].begin()).key() == "cluster.gpus");
  CHECK(run("plan --model gpt3-1.3b --tokens 3e11 --hardware h100-sx --days 30 --no-progress").code == 2);
  // The search skips plans by a bound that depends on what was simulated before: the answer
  // must not depend on the thread count.
  const std::string args = "plan --model gpt3-1.3b --tokens 3e11 --hardware h100-sxm,a100-80gb --days 30 --top 3 --no-progress";
  const auto one = run(args + " --threads 1" + fix, false);
  CHECK_THAT(one.out, Catch::Contains("skipped"));
  CHECK(one.out == run(args + " --threads 3" + fix, false).out);
}

TEST_CASE("sweep --auto-parallel has a schedule column with rows for each schedule that applies", "[tools][cli][zb]") {
  const std::string dir = std::string(CLUSTERSIM_BINARY) + "_sweep_zb_";
  {
    std::ofstream y(dir + "base.yaml");
    y << "name: zb\nmodel: llama2-7b\nhardware: h100-sxm\ncluster: {gpus: 8}\n"
         "training: {seq_len: 2048, global_batch: 8, tokens: 1e10}\n";
  }
  // One pipelined plan but for its schedule (pp 8: vpp 1, 2, 4 by the 32 layers).
  const std::string fix = " --set parallelism.tp=1 --set parallelism.pp=8 --set parallelism.cp=1 --set training.micro_batch=1"
                          " --set parallelism.zero_stage=0 --set training.recompute=none --no-progress --top 0";
  auto r = run("sweep " + dir + "base.yaml --auto-parallel --csv " + dir + "all.csv" + fix);
  REQUIRE(r.code == 0);
  const std::string csv = slurp(dir + "all.csv");
  std::istringstream lines(csv);
  std::string header, line;
  std::getline(lines, header);
  std::vector<std::string> cols;
  for (std::size_t start = 0, comma; start <= header.size(); start = comma + 1) {
    comma = std::min(header.find(',', start), header.size());
    cols.push_back(header.substr(start, comma - start));
  }
  const auto col = std::size_t(std::find(cols.begin(), cols.end(), "parallelism.schedule") - cols.begin());
  const auto vpp = std::size_t(std::find(cols.begin(), cols.end(), "parallelism.vpp") - cols.begin());
  const auto status = std::size_t(std::find(cols.begin(), cols.end(), "status") - cols.begin());
  REQUIRE(col < cols.size());
  std::vector<std::string> seen;
  while (std::getline(lines, line)) {
    std::vector<std::string> cells;
    for (std::size_t start = 0, comma; start <= line.size(); start = comma + 1) {
      comma = std::min(line.find(',', start), line.size());
      cells.push_back(line.substr(start, comma - start));
    }
    REQUIRE(cells.size() > std::max({col, vpp, status}));
    seen.push_back(cells[col] + "@vpp" + cells[vpp]);
    // dualpipev needs 2·pp = 16 micro-batches; the batch of 8 gives 8.
    CHECK(cells[status] == (cells[col] == "dualpipev" ? "invalid" : "ok"));
  }
  CHECK(seen == std::vector<std::string>{"1f1b@vpp1", "zb-h1@vpp1", "interleaved@vpp2", "dualpipev@vpp2", "zbv@vpp2",
                                         "interleaved@vpp4"});
  // --schedules restricts the dimension.
  r = run("sweep " + dir + "base.yaml --auto-parallel --schedules zb-h1 --csv " + dir + "zb.csv" + fix);
  REQUIRE(r.code == 0);
  const std::string zb = slurp(dir + "zb.csv");
  CHECK(std::count(zb.begin(), zb.end(), '\n') == 2);
  CHECK_THAT(zb, Catch::Contains(",zb-h1,"));
  for (const char* f : {"base.yaml", "all.csv", "zb.csv"}) std::remove((dir + f).c_str());
}

TEST_CASE("plan answers with the schedule, and its step time is run's with that schedule set", "[tools][cli][zb]") {
  const std::string dir = std::string(CLUSTERSIM_BINARY) + "_plan_zb_";
  {
    std::ofstream y(dir + "base.yaml");
    y << "name: zb\nmodel: llama2-7b\nhardware: h100-sxm\ncluster: {gpus: 8}\n"
         "training: {seq_len: 2048, global_batch: 8, tokens: 1e10}\n";
  }
  const std::string plan =
      "plan --model llama2-7b --tokens 1e10 --hardware h100-sxm --days 30 --seq-len 2048 --global-batch 8 --json "
      "--no-progress --top 1 --fix cluster.gpus=8 --fix parallelism.tp=1 --fix parallelism.pp=8 --fix parallelism.cp=1 "
      "--fix parallelism.vpp=1 --fix training.micro_batch=1 --fix parallelism.zero_stage=0 --fix training.recompute=none";
  const auto number_after = [](const std::string& text, const std::string& key) {
    const auto at = text.find("\"" + key + "\": ");
    REQUIRE(at != std::string::npos);
    return std::stod(text.substr(at + key.size() + 4));
  };
  for (const std::string schedule : {"zb-h1", "1f1b"}) {
    INFO(schedule);
    // With zb-h1 asked for, it wins (deep pipeline, few micro-batches); plan's default list leaves 1F1B.
    const auto p = run(plan + (schedule == "1f1b" ? "" : " --schedules 1f1b,zb-h1,interleaved"), false);
    REQUIRE(p.code == 0);
    const auto cheapest = p.out.substr(p.out.find("\"cheapest\""));
    CHECK(cheapest.find("\"parallelism.schedule\": \"" + schedule + "\"") < cheapest.find("\"fastest_per_gpu_count\""));
    const auto r = run("run " + dir + "base.yaml --json --set parallelism.pp=8 --set training.micro_batch=1 "
                       "--set parallelism.zero_stage=0 --set training.recompute=none --set parallelism.schedule=" + schedule, false);
    REQUIRE(r.code == 0);
    CHECK(number_after(cheapest, "step_time_s") == Approx(number_after(r.out, "step_time_s")).epsilon(1e-9));
  }
  std::remove((dir + "base.yaml").c_str());
}

TEST_CASE("sweep --auto-parallel over a scenario with recompute_modules runs its none and full plans without them",
          "[tools][cli]") {
  // recompute_modules apply to recompute: selective (Megatron --recompute-granularity selective);
  // the grid's other recompute plans used to be rejected for them.
  const std::string yaml = "/tmp/clustersim_sweep_modules.yaml";
  std::ofstream(yaml)
      << "name: t\nmodel: llama2-7b\nhardware: h100-sxm\ncluster: {gpus: 8}\n"
         "training: {seq_len: 4096, global_batch: 64, recompute: selective, recompute_modules: [core_attn]}\n";
  const auto r = run("sweep " + yaml +
                     " --auto-parallel --set parallelism.pp=1 --set parallelism.cp=1 --top 0 "
                     "--no-progress --threads 2");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("note: training.recompute_modules applies to recompute: selective") != std::string::npos);
  CHECK(r.out.find("applies to recompute: selective (Megatron") == std::string::npos);  // no row rejected for it
  CHECK(r.out.find(" 0 invalid") != std::string::npos);
}
}}  // namespace CLUSTERSIM_TEST_ID
