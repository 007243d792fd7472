// Issue 16, item 8: what the earlier fixes left (each of the others has its test in
// planner_args_test.cpp, bad_input_test.cpp and import_test.cpp).
#include <catch2/catch.hpp>

#include <chrono>

#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using clustersim::testing::run_command;

namespace {
const std::string kBin = CLUSTERSIM_BINARY;
const std::string kMain = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/7b_256xh100.yaml";
}  // namespace

TEST_CASE("a partly used rack-scale domain is reported as partial, not as full nodes", "[tools][bad-input]") {
  const auto r = run_command(kBin + " run " + kMain + " --set hardware=gb200 --set cluster.gpus=512 --set cluster.gpus_per_node=72 2>&1");
  INFO(r.out);
  CHECK(r.out.find("512 GPUs = 7 nodes x 72 + one partial node of 8") != std::string::npos);
  CHECK(r.out.find("8 nodes x 72") == std::string::npos);
  const auto full = run_command(kBin + " run " + kMain + " 2>&1");
  CHECK(full.out.find("256 GPUs = 32 nodes x 8 ") != std::string::npos);
}

TEST_CASE("a node size the machine cannot be cut into is rejected", "[tools][bad-input]") {
  const std::string sets = " --set cluster.gpus=12 --set parallelism.tp=1 --set training.global_batch=12";
  const auto bad = run_command(kBin + " run " + kMain + sets + " --set cluster.gpus_per_node=3 2>&1 >/dev/null");
  INFO(bad.out);
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.find("--set cluster.gpus_per_node") != std::string::npos);
  CHECK(bad.out.find("8-GPU node") != std::string::npos);
  // A 4-GPU board of the same machine (HGX 4-GPU) still reshapes.
  CHECK(run_command(kBin + " run " + kMain + sets + " --set cluster.gpus_per_node=4 >/dev/null 2>&1").exit_code == 0);
}

TEST_CASE("a scenario too large to simulate in reasonable time is an immediate exit-2 error", "[tools][bad-input]") {
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_command(kBin + " run " + kMain +
                             " --set cluster.gpus=10000000 --set training.global_batch=10000000 2>&1 >/dev/null");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--set cluster.gpus: 10000000 GPUs: at most 65536 are simulated") != std::string::npos);
  CHECK(s < 10);
}

TEST_CASE("a swept value's error names the --vary argument, not a file position", "[tools][sweep]") {
  const auto r = run_command(kBin + " sweep " + kMain + " --vary model.hidden=4001 --no-progress 2>/dev/null");
  INFO(r.out);
  CHECK(r.out.find("like: --vary model.hidden: hidden (4001) must be divisible by heads") != std::string::npos);
  CHECK(r.out.find(":1:1") == std::string::npos);
  const auto v = run_command(kBin + " sweep " + kMain + " --vary training.micro_batch=0 --no-progress 2>/dev/null");
  INFO(v.out);
  CHECK(v.out.find("like: --vary training.micro_batch: 0 is out of range") != std::string::npos);
  // A cross-key check (tp must divide ffn_hidden) blames the swept model key, not the file.
  const std::string m70 = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/70b_512xh100_tp8pp4.yaml";
  const auto f = run_command(kBin + " sweep " + m70 + " --vary model.ffn_hidden=28671 --no-progress 2>/dev/null");
  INFO(f.out);
  CHECK(f.out.find("like: --vary model.ffn_hidden: tp = 8 must divide the model's ffn_hidden (28671)") != std::string::npos);
}

}}  // namespace CLUSTERSIM_TEST_ID
