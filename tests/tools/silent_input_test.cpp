// Inputs that were accepted silently until issue 31 (item 4): each is now refused with one line
// naming the option and what is allowed, exit code 2; and the JSON writers give counts as exact
// integers and no 17-digit float noise.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <regex>

#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using clustersim::testing::run_command;

namespace {

const std::string kBin = CLUSTERSIM_BINARY;
const std::string kSrc = CLUSTERSIM_SOURCE_DIR;
const std::string kMain = kSrc + "/scenarios/7b_256xh100.yaml";

}  // namespace

TEST_CASE("inputs once accepted silently are one-line errors with exit code 2", "[tools][bad-input]") {
  const std::string two_docs = "/tmp/clustersim_two_documents.yaml";
  std::ofstream(two_docs) << "name: x\nmodel: llama2-7b\nhardware: h100-sxm\ncluster: {gpus: 8}\n"
                             "training: {seq_len: 8, global_batch: 8}\n---\nname: y\n";
  const std::string plan = " plan --model llama3-8b --tokens 1e12 --days 30 --no-progress";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {plan + " --global-batch 0", "--global-batch 0: expected a whole number of sequences >= 1"},
      {plan + " --gpu-step -8", "--gpu-step -8: expected a whole number of GPUs >= 1"},
      {plan + " --max-gpus -1", "--max-gpus -1"},
      {plan + " --top -1", "--top -1"},
      {" run " + kMain + " --set training.micro_batch=", "--set training.micro_batch=: empty value"},
      {" run " + two_docs, two_docs + ":6: a second YAML document"},
      {" run " + kMain + " --set training.tokens=null --monte-carlo 10",
       "--monte-carlo 10: replays the whole training run"},
      {" collective --op reduce_scatter --algorithm tree", "--algorithm tree: reduce_scatter does not run it"},
      {" collective --op all_gather --algorithm nvls", "allowed for --op all_gather: auto, ring, hierarchical"},
      {" collective --op all_to_all --algorithm ring", "allowed for --op all_to_all: auto (direct)"},
      {" mfu --tokens-per-s -5 --model llama2-7b --seq-len 4096 --gpus 8",
       "--tokens-per-s -5: expected a positive number of tokens per second"},
      {" mfu --step-time -1 --global-batch 8 --model llama2-7b --seq-len 4096 --gpus 8", "--step-time -1"},
      {" mfu --step-time 1 --global-batch 0 --model llama2-7b --seq-len 4096 --gpus 8",
       "--step-time needs --global-batch N and --seq-len N, both above 0 (here --global-batch 0, --seq-len 4096)"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = run_command(kBin + args + " 2>&1 >/dev/null");
    INFO(args << "\n  message: " << r.out);
    CHECK(r.exit_code == 2);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    CHECK(r.out.find(message) != std::string::npos);
  }
}

TEST_CASE("collective --sizes FIRST..LAST reaches LAST where doubling overshoots it", "[tools][collective]") {
  const auto r = run_command(kBin + " collective --sizes 1MB..1GB --json");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"size_bytes\": 512000000,") != std::string::npos);
  CHECK(r.out.find("\"size_bytes\": 1000000000,") != std::string::npos);
  const auto exact = run_command(kBin + " collective --sizes 1MiB..8MiB --json");
  CHECK(std::count(exact.out.begin(), exact.out.end(), '{') == 4);  // 1, 2, 4, 8 MiB: nothing added
}

TEST_CASE("JSON counts are exact integers and numbers carry no float noise", "[tools][json]") {
  const auto run = run_command(kBin + " run " + kSrc + "/scenarios/70b_512xh100_tp8pp4.yaml --json");
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("\"model_params\": 70553706496,") != std::string::npos);
  for (const char* key : {"peak_memory_bytes", "model_params", "weights_bytes", "capacity_bytes", "checkpoint_bytes", "total_bytes"}) {
    INFO(key);
    CHECK(std::regex_search(run.out, std::regex(std::string("\"") + key + "\": [0-9]+[,}\n]")));
  }
  const auto coll = run_command(kBin + " collective --op reduce_scatter --json");
  REQUIRE(coll.exit_code == 0);
  CHECK(coll.out.find("\"size_bytes\": 1000,") != std::string::npos);
  // A fraction has at most 10 significant digits: 3.8804743000000002e-05 was the noise of printing 17.
  const std::regex fraction("[0-9]+\\.[0-9]+");
  for (auto it = std::sregex_iterator(coll.out.begin(), coll.out.end(), fraction); it != std::sregex_iterator(); ++it) {
    std::string digits;
    for (char c : it->str())
      if (c != '.') digits += c;
    digits.erase(0, digits.find_first_not_of('0'));
    INFO(it->str());
    CHECK(digits.size() <= 10);
  }
}

}}  // namespace CLUSTERSIM_TEST_ID
