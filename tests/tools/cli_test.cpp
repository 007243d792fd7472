#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <set>

#include <yaml-cpp/yaml.h>

#include "support/json_fixture.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using clustersim::testing::json_number;
using clustersim::testing::run_command;

namespace {
const std::string kBin = CLUSTERSIM_BINARY;
const std::string kSrc = CLUSTERSIM_SOURCE_DIR;

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/clustersim_test_" + name;
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST_CASE("clustersim run --json on the main scenario has every key in sane ranges", "[tools]") {
  const auto r = run_command(kBin + " run " + kSrc + "/scenarios/7b_256xh100.yaml --json 2>/dev/null");
  REQUIRE(r.exit_code == 0);
  for (const char* key : {"step_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "mfu", "hfu", "tflops_per_gpu",
                          "days_to_train", "peak_memory_bytes", "num_gpus", "model_params", "flops_per_token"})
    json_number(r.out, key);
  REQUIRE(r.out.find("\"fits_in_memory\": true") != std::string::npos);
  for (const char* key : {"forward_s", "backward_s", "recompute_s", "dp_comm_exposed_s", "optimizer_s", "idle_s"})
    json_number(r.out, key);
  REQUIRE(json_number(r.out, "num_gpus") == 256);
  REQUIRE(json_number(r.out, "model_params") == Approx(6.74e9).epsilon(0.01));
  const double mfu = json_number(r.out, "mfu");
  REQUIRE(mfu > 0.3);
  REQUIRE(mfu < 0.8);
  REQUIRE(json_number(r.out, "step_time_s") > 0.5);
  REQUIRE(json_number(r.out, "step_time_s") < 3.0);
  REQUIRE(json_number(r.out, "days_to_train") > 1);
  REQUIRE(json_number(r.out, "peak_memory_bytes") < 80.0 * (1 << 30));
}

TEST_CASE("clustersim run prints a summary with units", "[tools]") {
  const auto r = run_command(kBin + " run " + kSrc + "/scenarios/7b_256xh100.yaml 2>&1");
  REQUIRE(r.exit_code == 0);
  for (const char* text : {"step time", "tokens/s", "MFU", "HFU", "days to train", "memory per GPU", "GiB"})
    REQUIRE(r.out.find(text) != std::string::npos);
}

TEST_CASE("the same scenario prints byte-identical output", "[tools]") {
  const std::string cmd = kBin + " run " + kSrc + "/scenarios/7b_256xh100.yaml --json";
  REQUIRE(run_command(cmd).out == run_command(cmd).out);
}

TEST_CASE("scenario keys can be overridden from the command line with --set", "[tools]") {
  const auto r = run_command(kBin + " run " + kSrc +
                             "/scenarios/7b_256xh100.yaml --json --set cluster.gpus=512 --set parallelism.dp=512 --set training.micro_batch=2");
  REQUIRE(r.exit_code == 0);
  REQUIRE(json_number(r.out, "num_gpus") == 512);
}

namespace {
// Bad input: exit code 2 and one line on stderr naming the file and the key.
void expect_one_line_error(const std::string& args, const std::vector<std::string>& must_contain) {
  const auto r = run_command(kBin + " run " + args + " 2>&1 >/dev/null");
  INFO(r.out);
  REQUIRE(r.exit_code == 2);
  REQUIRE(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  for (const auto& s : must_contain) REQUIRE(r.out.find(s) != std::string::npos);
}
}  // namespace

TEST_CASE("bad input gives a one-line error with the file and key and exit code 2", "[tools]") {
  const std::string good = kSrc + "/scenarios/7b_256xh100.yaml";
  expect_one_line_error("/nonexistent/s.yaml", {"/nonexistent/s.yaml"});
  expect_one_line_error(write_temp("syntax.yaml", "name: x\nmodel: [unclosed\n"), {"syntax.yaml:", "YAML syntax error"});
  expect_one_line_error(good + " --set training.micro_bacth=2", {"micro_bacth", "did you mean 'micro_batch'"});
  expect_one_line_error(good + " --set model=llama9-7b", {"model", "unknown preset 'llama9-7b'", "llama2-7b"});
  expect_one_line_error(good + " --set training.global_batch=1000", {"training.global_batch", "multiple of"});
  expect_one_line_error(good + " --set parallelism.dp=100", {"parallelism.dp"});
  expect_one_line_error(good + " --set training.seq_len=0", {"training.seq_len", "out of range"});
  expect_one_line_error(good + " --set hardware.memory_bandwidth=fast", {"hardware.memory_bandwidth"});
  const std::string unknown = write_temp("unknown.yaml", "name: x\nmodel: llama2-7b\nhardware: h100-sxm\n"
                                                         "cluster: {gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8, precison: bf16}\n");
  expect_one_line_error(unknown, {"unknown.yaml:5:", "training.precison", "did you mean 'precision'"});
}

TEST_CASE("a plan that does not fit prints its report, says why on stderr and exits 3", "[tools]") {
  const auto r = run_command(kBin + " run " + kSrc + "/scenarios/7b_256xh100.yaml --set parallelism.zero_stage=0 2>&1");
  REQUIRE(r.exit_code == 3);
  REQUIRE(r.out.find("does not fit in memory") != std::string::npos);
  REQUIRE(r.out.find("DOES NOT FIT") != std::string::npos);
}

TEST_CASE("clustersim mfu reproduces the seeds' worked example (≈53%)", "[tools]") {
  const auto r = run_command(kBin + " mfu --tokens-per-s 100000 --flops-per-token 4.2e10 --gpus 8 --gpu h100-sxm --json");
  REQUIRE(r.exit_code == 0);
  REQUIRE(json_number(r.out, "mfu") == Approx(4.2e15 / (8 * 989.4e12)).epsilon(1e-6));
  REQUIRE(r.out.find("\"warnings\": []") != std::string::npos);
}

TEST_CASE("clustersim mfu flags a per-GPU / cluster throughput mix-up", "[tools]") {
  const auto r = run_command(kBin + " mfu --tokens-per-s 100000 --per-gpu --flops-per-token 4.2e10 --gpus 8");
  REQUIRE(r.out.find("impossible") != std::string::npos);
  const auto low = run_command(kBin + " mfu --tokens-per-s 3000 --model llama2-7b --seq-len 4096 --gpus 64");
  REQUIRE(low.out.find("add --per-gpu") != std::string::npos);
}

TEST_CASE("run --explain --json has a waterfall and --plot writes an SVG", "[tools]") {
  const std::string svg = "/tmp/clustersim_test_waterfall.svg";
  std::remove(svg.c_str());
  const auto r = run_command(kBin + " run " + kSrc + "/scenarios/7b_256xh100.yaml --explain --json --plot " + svg);
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.out.find("\"waterfall\": [") != std::string::npos);
  REQUIRE(r.out.find("\"mfu_points\"") != std::string::npos);
  std::ifstream in(svg);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(text.rfind("<svg", 0) == 0);
  REQUIRE(text.find("</svg>") != std::string::npos);
  REQUIRE(std::count(text.begin(), text.end(), '<') == std::count(text.begin(), text.end(), '>'));
}

TEST_CASE("the waterfall SVG renders to a PNG (rsvg-convert, installed by tools/setup.sh)", "[tools]") {
  const std::string svg = "/tmp/clustersim_test_render.svg", png = "/tmp/clustersim_test_render.png";
  std::remove(png.c_str());
  REQUIRE(run_command(kBin + " run " + kSrc + "/scenarios/7b_256xh100.yaml --explain --plot " + svg + " >/dev/null").exit_code == 0);
  const auto r = run_command("rsvg-convert " + svg + " -o " + png + " 2>&1");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(png, std::ios::binary | std::ios::ate);
  REQUIRE(in.tellg() > 5000);
}

TEST_CASE("run with a trace file writes Chrome trace JSON whose events span the simulated step", "[tools]") {
  const std::string trace = "/tmp/clustersim_test_trace.json";
  std::remove(trace.c_str());
  // 8 micro-batches per step (global batch 128 over dp 16) keep the trace small enough to parse
  // quickly under the sanitizers; all four kinds of stream still appear.
  const std::string run = kBin + " run " + kSrc + "/scenarios/175b_1024xa100.yaml --set training.global_batch=128 --json";
  const auto r = run_command(run + " --trace " + trace);
  REQUIRE(r.exit_code == 0);
  const YAML::Node doc = YAML::LoadFile(trace);  // JSON is YAML: a parse failure throws
  const YAML::Node events = doc["traceEvents"];
  REQUIRE(events.IsSequence());
  double end_us = 0;
  std::set<std::string> threads;
  std::size_t complete = 0;
  for (const auto& e : events) {
    if (e["ph"].as<std::string>() == "M") {
      if (e["name"].as<std::string>() == "thread_name") threads.insert(e["args"]["name"].as<std::string>());
      continue;
    }
    if (e["ph"].as<std::string>() == "C") continue;  // the memory counter
    ++complete;
    end_us = std::max(end_us, e["ts"].as<double>() + e["dur"].as<double>());
  }
  REQUIRE(complete > 1000);
  // The trace is the kernel-level simulation of the step the report gives (merged passes).
  REQUIRE(end_us / 1e6 == Approx(json_number(r.out, "step_time_s")).epsilon(0.005));
  // Asking for a trace does not change the report.
  const auto plain = run_command(run);
  REQUIRE(plain.out == r.out);
  for (const char* stream : {"compute", "tp_comm", "pp_send_fwd", "dp_reduce"}) REQUIRE(threads.count(stream) == 1);
}

TEST_CASE("the trace shows an MoE block as it runs: router, permute, grouped experts", "[tools][moe]") {
  const std::string trace = "/tmp/clustersim_test_trace_moe.json";
  std::remove(trace.c_str());
  // Qwen3-235B on GB200 (A2A overlap) at 32 micro-batches per stage (96 chunk passes): enough for
  // the combined 1F1B to pair passes after its warm-up (31 forwards alone on the first stage),
  // small enough for the sanitizers.
  const auto r =
      run_command(kBin + " run " + kSrc +
                  "/scenarios/qwen3_235b_256xgb200.yaml --set training.global_batch=1024 --json --trace " + trace);
  REQUIRE(r.exit_code == 0);
  const YAML::Node events = YAML::LoadFile(trace)["traceEvents"];
  std::set<std::string> kernels;
  double end_us = 0;
  for (const auto& e : events) {
    if (e["ph"].as<std::string>() != "X") continue;
    end_us = std::max(end_us, e["ts"].as<double>() + e["dur"].as<double>());
    if (e["cat"].as<std::string>() == "kernel") kernels.insert(e["name"].as<std::string>());
  }
  for (const char* k : {"router", "router.topk", "moe.permute+unpermute", "experts.fc1", "experts.fc2", "experts.fc1.wgrad",
                        "router.wgrad"})
    CHECK(kernels.count(k) == 1);
  CHECK(kernels.count("mlp_gate_up") == 0);  // no dense MLP in an all-MoE model
  // The merged passes of the report and the kernel-level trace: within 0.5 %, as for dense steps
  // (here 0.00 %). A merged pass runs its exposed exchanges on the stage's links, where the DP
  // and pipeline traffic meets them as on the kernel-level graph, and a unit's EP tail holds its
  // kernels' SMs beside the next unit (models/step.cpp add_merged; 0.9 % before, 1.5 % before the
  // EP tail queued).
  CHECK(end_us / 1e6 == Approx(json_number(r.out, "step_time_s")).epsilon(0.005));
}

TEST_CASE("sweep writes its metric against the swept key as an SVG that renders", "[tools]") {
  const std::string svg = "/tmp/clustersim_test_sweep.svg", png = "/tmp/clustersim_test_sweep.png";
  std::remove(svg.c_str());
  const auto r = run_command(kBin + " sweep " + kSrc + "/scenarios/7b_256xh100.yaml --vary cluster.gpus=64..256:x2 " +
                             "--vary parallelism.dp=64..256:x2 --top 0 --plot " + svg + " 2>/dev/null");
  REQUIRE(r.exit_code == 0);
  std::ifstream in(svg);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(std::count(text.begin(), text.end(), '\n') > 10);
  REQUIRE(text.find("<polyline") != std::string::npos);  // the best-per-value line
  REQUIRE(run_command("rsvg-convert " + svg + " -o " + png).exit_code == 0);
}

TEST_CASE("collective --json quotes a topology file's name as a JSON string", "[tools][network]") {
  std::ifstream preset(kSrc + "/topologies/presets/dgx-h100.yaml");
  std::string text((std::istreambuf_iterator<char>(preset)), std::istreambuf_iterator<char>());
  const std::string from = "name: dgx-h100";
  REQUIRE(text.find(from) != std::string::npos);
  text.replace(text.find(from), from.size(), R"(name: 'lab "B" \ fabric')");
  const std::string file = write_temp("quoted_topology.yaml", text);
  const auto r = run_command(kBin + " collective --topology " + file + " --gpus 16 --sizes 1MiB --json 2>&1");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains(R"("topology": "lab \"B\" \\ fabric")"));
  const YAML::Node rows = YAML::Load(r.out);  // JSON is YAML: the row still parses
  CHECK(rows[0]["topology"].as<std::string>() == R"(lab "B" \ fabric)");
}

}}  // namespace CLUSTERSIM_TEST_ID
