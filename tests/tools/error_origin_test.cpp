// Errors in sweep and plan name where a value came from (issue 31, item 4): the file's own line
// (also for an inline `base:` override and inside a sweep), --vary, --set, --fix or plan, never a
// copied tree's file:1:1; and plan searches no cluster above the 65,536 GPUs a scenario may have.
#include <catch2/catch.hpp>

#include <fstream>

#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using clustersim::testing::run_command;

namespace {

const std::string kBin = CLUSTERSIM_BINARY;

std::string write(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/clustersim_origin_" + name + ".yaml";
  std::ofstream(path) << text;
  return path;
}

const char* kInline = "name: t\nmodel:\n  base: llama2-7b\n  heads: 7\nhardware: h100-sxm\ncluster: {gpus: 8}\n"
                      "training: {seq_len: 4096, global_batch: 8}\n";
const char* kBlock = "name: t\nmodel: llama2-7b\nhardware: h100-sxm\ncluster: {gpus: 8}\ntraining:\n  seq_len: 0\n"
                     "  global_batch: 8\n";
const char* kPlain = "name: t\nmodel: llama2-7b\nhardware: h100-sxm\ncluster: {gpus: 8}\ntraining:\n  seq_len: 4096\n"
                     "  global_batch: 8\n";

}  // namespace

TEST_CASE("errors cite the line a key was written on, also in a sweep and under an inline base", "[tools][bad-input]") {
  const std::string inl = write("inline", kInline), block = write("block", kBlock);
  auto r = run_command(kBin + " run " + inl + " 2>&1");
  CHECK(r.out.find(inl + ":4:10: model.heads:") != std::string::npos);
  r = run_command(kBin + " sweep " + inl + " --vary training.micro_batch=1,2 --no-progress 2>&1");
  INFO(r.out);
  CHECK(r.out.find("like: " + inl + ":4:10: model.heads:") != std::string::npos);
  r = run_command(kBin + " sweep " + block + " --vary training.micro_batch=1,2 --no-progress 2>&1");
  CHECK(r.out.find("like: " + block + ":6:12: training.seq_len:") != std::string::npos);
  CHECK(r.out.find(":1:1:") == std::string::npos);
}

TEST_CASE("sweep and plan name --vary, --set, --fix and plan as the origin of a value", "[tools][bad-input]") {
  const std::string plain = write("plain", kPlain);
  auto r = run_command(kBin + " sweep " + plain + " --vary cluster.gpus=8,100000 --no-progress 2>&1");
  CHECK(r.out.find("like: --vary cluster.gpus: 100000 GPUs") != std::string::npos);
  r = run_command(kBin + " sweep " + plain + " --vary training.micro_batch=1,2 --set parallelism.tp=3 --no-progress 2>&1");
  CHECK(r.out.find("like: --set parallelism.tp: tp = 3") != std::string::npos);
  r = run_command(kBin + " sweep " + plain + " --vary training.micro_bacth=1,2 --no-progress 2>&1");
  CHECK(r.out.find("error: --vary training.micro_bacth: unknown key") != std::string::npos);
  const std::string plan = " plan --model gpt3-1.3b --tokens 3e11 --days 30 --max-gpus 24 --threads 1 --no-progress";
  r = run_command(kBin + plan + " --fix parallelism.tp=3 2>&1");
  INFO(r.out);
  CHECK(r.out.find("like: --fix parallelism.tp: tp = 3") != std::string::npos);
  CHECK(r.out.find("--set") == std::string::npos);
  r = run_command(kBin + plan + " --global-batch 1000 2>&1");
  CHECK(r.out.find("like: plan: training.global_batch:") != std::string::npos);
  CHECK(r.out.find("plan:1:1") == std::string::npos);
}

TEST_CASE("plan searches no cluster above the simulation cap and says so", "[tools][plan]") {
  const auto r = run_command(kBin + " plan --model gpt3-1.3b --tokens 3e13 --days 3 --global-batch 16384 --max-gpus 131072"
                                    " --fix parallelism.tp=8 --fix parallelism.pp=1 --fix parallelism.cp=1"
                                    " --fix parallelism.zero_stage=1 --fix training.micro_batch=1 --fix training.recompute=none"
                                    " --gpu-step 32768 --threads 2 --no-progress 2>&1");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("at most 65536 are simulated") == std::string::npos);  // no rejected 98,304 or 131,072
  CHECK(r.out.find("2 plans") != std::string::npos);                      // 32,768 and 65,536 GPUs
  CHECK(r.out.find("not searched: h100-sxm clusters above 65536 GPUs") != std::string::npos);
}

TEST_CASE("a list entry under an inline base is cited at its key's line, not at 1:1", "[tools][bad-input]") {
  // The model merged over its preset is a new tree whose entries carry no marks of their own.
  const std::string path = write("list_entry",
                                 "name: t\nmodel:\n  base: nemotron-h-8b\n  layers: 2\n"
                                 "  layer_pattern: [M, bad]\nhardware: h100-sxm\ncluster: {gpus: 8}\n"
                                 "training: {seq_len: 4096, global_batch: 64}\n");
  const auto r = run_command(kBin + " run " + path + " 2>&1");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find(path + ":5:18: model.layer_pattern: entry 2 must be one of") != std::string::npos);
}
}}  // namespace CLUSTERSIM_TEST_ID
