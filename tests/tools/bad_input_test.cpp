// Every kind of bad input gets one line on stderr naming where and what, and exit code 2.
#include <catch2/catch.hpp>

#include <fstream>

#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using clustersim::testing::run_command;

namespace {

const std::string kBin = CLUSTERSIM_BINARY;
const std::string kMain = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/7b_256xh100.yaml";

struct BadInput {
  const char* what;
  std::string args;        ///< arguments after `clustersim run`
  const char* file_text;   ///< when set, written to a file that replaces {file} in args
  std::vector<std::string> expected;  ///< substrings of the one-line message
};

std::string materialize(const BadInput& b, int index) {
  std::string args = b.args;
  if (b.file_text) {
    const std::string path = "/tmp/clustersim_bad_" + std::to_string(index) + ".yaml";
    std::ofstream(path) << b.file_text;
    args.replace(args.find("{file}"), 6, path);
  }
  return args;
}


std::vector<BadInput> cases() {
  const std::string m = kMain;
  return {
      {"missing file", "/nonexistent/s.yaml", nullptr, {"/nonexistent/s.yaml", "cannot open"}},
      {"YAML syntax error", "{file}", "name: x\nmodel: [unclosed\n", {":3:1:", "YAML syntax error"}},
      {"empty file", "{file}", "", {"the scenario is empty"}},
      {"scenario is a list", "{file}", "- a\n- b\n", {"must be a mapping"}},
      {"unknown top-level key", "{file}", "name: t\nmodel: llama2-7b\nhardware: h100-sxm\ncluster: {gpus: 8}\ntrainig: {}\n",
       {"bad_4.yaml:5:1:", "unknown key 'trainig'", "did you mean 'training'"}},
      {"misspelled nested key", m + " --set training.micro_bacth=2", nullptr, {"did you mean 'micro_batch'"}},
      {"unknown model preset", m + " --set model=llama9-7b", nullptr, {"unknown preset 'llama9-7b'", "did you mean 'llama2-7b'"}},
      {"unknown hardware preset", m + " --set hardware=h300", nullptr, {"hardware", "unknown preset 'h300'", "h100-sxm"}},
      {"missing model", "{file}", "name: t\nhardware: h100-sxm\ncluster: {gpus: 8}\ntraining: {seq_len: 8, global_batch: 8}\n",
       {"model: is required"}},
      {"missing required training key", "{file}", "name: t\nmodel: llama2-7b\nhardware: h100-sxm\ncluster: {gpus: 8}\ntraining: {global_batch: 8}\n",
       {"training.seq_len: is required"}},
      {"batch not divisible", m + " --set training.global_batch=1000", nullptr, {"training.global_batch", "multiple of micro_batch × dp"}},
      {"inconsistent dp", m + " --set parallelism.dp=100", nullptr, {"parallelism.dp", "cluster.gpus / (tp*pp*cp) = 256"}},
      {"zb-h1 with vpp > 1", m + " --set parallelism.schedule=zb-h1 --set parallelism.vpp=2", nullptr,
       {"parallelism.vpp", "zb-h1 runs one model chunk per stage"}},
      {"unknown schedule", m + " --set parallelism.schedule=zb-h2", nullptr, {"parallelism.schedule", "zb-h1"}},
      {"zero sequence length", m + " --set training.seq_len=0", nullptr, {"training.seq_len", "out of range; allowed 1..10000000"}},
      {"zero GPUs", m + " --set cluster.gpus=0", nullptr, {"cluster.gpus", "out of range"}},
      {"GPUs that are not whole nodes", m + " --set cluster.gpus=100", nullptr, {"cluster.gpus", "not whole nodes of 8"}},
      {"negative GPUs", m + " --set cluster.gpus=-8", nullptr, {"cluster.gpus", "out of range"}},
      {"fractional count", m + " --set training.micro_batch=1.5", nullptr, {"training.micro_batch", "not a whole number"}},
      {"absurd layer count", m + " --set model.layers=1000000000", nullptr, {"model.layers", "out of range; allowed 1..2000"}},
      {"heads do not divide hidden", m + " --set model.heads=7", nullptr, {"model.heads", "must be divisible by heads (7)"}},
      {"kv_heads do not divide heads", m + " --set model.kv_heads=5", nullptr, {"model.kv_heads", "multiple of kv_heads (5)"}},
      {"unknown precision", m + " --set training.precision=bf17", nullptr, {"training.precision", "'bf17' is not allowed", "did you mean 'bf16'"}},
      {"fp8 on a GPU without FP8", m + " --set hardware=a100-80gb --set training.precision=fp8", nullptr, {"training.precision", "no FP8"}},
      {"bandwidth without /s", m + " --set network.node.nic_bandwidth=400Gb", nullptr, {"network.node.nic_bandwidth", "expected a bandwidth"}},
      {"negative bandwidth", m + " --set hardware.memory_bandwidth=-3TB/s", nullptr, {"hardware.memory_bandwidth", "out of range"}},
      {"NaN", m + " --set training.tokens=.nan", nullptr, {"training.tokens"}},
      {"not a boolean", m + " --set training.flash_attention=maybe", nullptr, {"training.flash_attention", "not a boolean"}},
      {"list instead of a value", m + " --set training.seq_len=[1,2]", nullptr, {"training.seq_len", "expected a single value"}},
      {"ZeRO stage out of range", m + " --set parallelism.zero_stage=5", nullptr, {"parallelism.zero_stage", "allowed 0..3"}},
      {"too many micro-batches", m + " --set training.global_batch=100000000", nullptr,
       {"training.global_batch", "390625 micro-batches", "at most 100000"}},
      {"malformed --set", m + " --set training.micro_batch", nullptr, {"--set training.micro_batch", "key.path=value"}},
      {"override into a scalar", m + " --set name.x=1", nullptr, {"--set name.x", "not a mapping"}},
      {"non-scalar mapping key", "{file}", "name: t\n[a, b]: 1\n", {"keys must be plain names"}},
      // Megatron's block method counts layers per pipeline stage (llama2-7b: 32 layers, pp 2: 16).
      {"recompute_layers above a stage's layers", "{file}",
       "name: t\nmodel: llama2-7b\nhardware: h100-sxm\ncluster: {gpus: 8}\nparallelism: {pp: 2}\n"
       "training:\n  seq_len: 8\n  global_batch: 8\n  recompute: full\n  recompute_layers: 17\n",
       {".yaml:10:", "training.recompute_layers", "17 exceeds the 16 layers of a pipeline stage", "allowed: 0 to 16"}},
      {"recompute_layers without full recompute", m + " --set training.recompute_layers=4", nullptr,
       {"training.recompute_layers", "applies only with recompute: full", "allowed: recompute: full with recompute_layers 0 to 32"}},
      {"negative recompute_layers", m + " --set training.recompute=full --set training.recompute_layers=-1", nullptr,
       {"training.recompute_layers", "out of range; allowed 0..1000000"}},
  };
}

}  // namespace

TEST_CASE("every bad input gets a one-line error naming the key, and exit code 2", "[tools][bad-input]") {
  const auto all = cases();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& b = all[i];
    const auto r = run_command(kBin + " run " + materialize(b, int(i)) + " 2>&1 >/dev/null");
    INFO(b.what << "\n  message: " << r.out);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    CHECK(r.out.rfind("error: ", 0) == 0);
    for (const auto& e : b.expected) CHECK(r.out.find(e) != std::string::npos);
  }
}

TEST_CASE("inputs that once crashed the fuzzer are clean errors now", "[tools][bad-input]") {
  const std::string dir = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/fuzz/crashes";
  const auto list = run_command("ls " + dir);
  REQUIRE(!list.out.empty());
  std::size_t start = 0;
  for (std::size_t nl; (nl = list.out.find('\n', start)) != std::string::npos; start = nl + 1) {
    const std::string file = dir + "/" + list.out.substr(start, nl - start);
    const auto r = run_command(kBin + " run '" + file + "' 2>&1 >/dev/null");
    INFO(file << ": " << r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.rfind("error: ", 0) == 0);
  }
}

}}  // namespace CLUSTERSIM_TEST_ID
