#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

namespace { namespace CLUSTERSIM_TEST_ID {

namespace {

std::string run_cli(const std::string& args) {
  const std::string cmd = std::string(CLUSTERSIM_BINARY) + " run " + CLUSTERSIM_SOURCE_DIR + "/scenarios/" + args;
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  pclose(pipe);
  return out;
}

}  // namespace

TEST_CASE("clustersim run --monte-carlo is deterministic for a seed and reports percentiles", "[tools][reliability]") {
  const std::string args = "7b_256xh100.yaml --json --monte-carlo 200 --seed 5 --set cluster.gpus=4096 "
                           "--set parallelism.dp=4096 --set training.global_batch=4096";
  const std::string a = run_cli(args), b = run_cli(args);
  CHECK(a == b);
  for (const char* key : {"\"goodput\"", "\"days_to_train_ideal\"", "\"expected_interruptions\"",
                          "\"checkpoint_interval_s\"", "\"lost_work_s\"", "\"days_p10\"", "\"days_p90\""})
    CHECK_THAT(a, Catch::Contains(key));
  CHECK(run_cli(args + " --seed 6") != a);
}

}}  // namespace CLUSTERSIM_TEST_ID
