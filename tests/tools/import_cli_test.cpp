// `clustersim import` and `clustersim presets` as a user runs them, and presets given as files: an imported
// configuration must predict exactly what the hand-written scenario of the same configuration predicts.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/scenario_fixture.hpp"

using clustersim::testing::run_command;

namespace {

const std::string kBin = CLUSTERSIM_BINARY;
const std::string kSrc = CLUSTERSIM_SOURCE_DIR;
const std::string kInputs = kSrc + "/tests/scenarios/import_inputs/";

// A fresh folder for one test's files.
std::string temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("clustersim_import_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// The JSON report without the lines that only name things (scenario name, model/hardware preset name).
std::string predictions(const std::string& json) {
  std::istringstream in(json);
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("  \"name\":", 0) != 0 && line.rfind("  \"model\":", 0) != 0 && line.rfind("  \"hardware\":", 0) != 0)
      out += line + "\n";
  return out;
}

std::string run_json(const std::string& args) {
  const auto r = run_command(kBin + " run " + args + " --json 2>&1");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  return predictions(r.out);
}

}  // namespace

TEST_CASE("presets: lists each kind with a description, shows one and suggests a name for a typo", "[import][tools]") {
  const auto list = run_command(kBin + " presets models 2>&1");
  REQUIRE(list.exit_code == 0);
  CHECK(list.out.find("llama3-8b") != std::string::npos);
  CHECK(list.out.find("Llama 3") != std::string::npos);
  CHECK(list.out.find("h100-sxm") == std::string::npos);  // hardware is another kind
  const auto all = run_command(kBin + " presets 2>&1");
  CHECK(all.out.find("hardware:") != std::string::npos);
  CHECK(all.out.find("dgx-h100") != std::string::npos);
  const auto show = run_command(kBin + " presets show h100-sxm 2>&1");
  REQUIRE(show.exit_code == 0);
  CHECK(show.out.find("name: h100-sxm") != std::string::npos);
  const auto typo = run_command(kBin + " presets show h100-sx 2>&1");
  CHECK(typo.exit_code == 2);
  CHECK(typo.out.find("did you mean 'h100-sxm'") != std::string::npos);
}

TEST_CASE("a hardware profile given as a file predicts what the preset of the same text predicts", "[import][tools]") {
  const std::string dir = temp_dir("hw_file");
  write(dir + "/my-h100.yaml", run_command(kBin + " presets show h100-sxm").out);
  std::ifstream in(kSrc + "/scenarios/7b_256xh100.yaml");
  std::stringstream scenario;
  scenario << in.rdbuf();
  std::string text = scenario.str();
  const std::size_t at = text.find("hardware: h100-sxm");
  REQUIRE(at != std::string::npos);
  text.replace(at, std::string("hardware: h100-sxm").size(), "hardware: ./my-h100.yaml");
  write(dir + "/scenario.yaml", text);
  CHECK(run_json(dir + "/scenario.yaml") == run_json(kSrc + "/scenarios/7b_256xh100.yaml"));
  // A missing file names the scenario's line and the path it tried.
  write(dir + "/missing.yaml", "name: x\nmodel: llama2-7b\nhardware: ./nope.yaml\ncluster: {gpus: 8}\n");
  const auto missing = run_command(kBin + " run " + dir + "/missing.yaml 2>&1");
  CHECK(missing.exit_code == 2);
  CHECK(missing.out.find("missing.yaml:3:") != std::string::npos);
  CHECK(missing.out.find("nope.yaml") != std::string::npos);
  std::filesystem::create_directories(dir + "/adir.yaml");
  write(dir + "/dir.yaml", "name: x\nmodel: llama2-7b\nhardware: ./adir.yaml\ncluster: {gpus: 8}\n");
  const auto directory = run_command(kBin + " run " + dir + "/dir.yaml 2>&1");
  CHECK(directory.exit_code == 2);
  CHECK(directory.out.find("is a directory") != std::string::npos);
}

TEST_CASE("import megatron: the Llama-3 70B launch script predicts what the hand-written scenario predicts", "[import][tools]") {
  const std::string dir = temp_dir("megatron");
  const auto imp = run_command(kBin + " import megatron " + kInputs + "llama3_70b_tp8pp4cp2.sh --hardware h100-sxm -o " + dir + "/s.yaml 2>&1");
  INFO(imp.out);
  REQUIRE(imp.exit_code == 0);
  CHECK(imp.out.find("warning: attention implementation") != std::string::npos);  // an assumption is said
  // The script trains 1,831,054,688 samples of 8,192 tokens; the scenario says 1.5e13 tokens.
  CHECK(run_json(dir + "/s.yaml") ==
        run_json(kSrc + "/scenarios/70b_512xh100_tp8pp4.yaml --set training.tokens=15000000004096"));
}

TEST_CASE("import hf: a config.json written as a model file predicts what the preset predicts", "[import][tools]") {
  const std::string dir = temp_dir("hf");
  const auto imp = run_command(kBin + " import hf " + kInputs + "llama3_8b_config.json -o " + dir + "/llama3-8b.yaml 2>&1");
  INFO(imp.out);
  REQUIRE(imp.exit_code == 0);
  const std::string scenario = "name: t\nhardware: h100-sxm\ncluster: {gpus: 64}\nparallelism: {tp: 2, zero_stage: 1}\n"
                               "training: {seq_len: 8192, global_batch: 256, micro_batch: 1}\n";
  write(dir + "/file.yaml", scenario + "model: ./llama3-8b.yaml\n");
  write(dir + "/preset.yaml", scenario + "model: llama3-8b\n");
  CHECK(run_json(dir + "/file.yaml") == run_json(dir + "/preset.yaml"));
}

TEST_CASE("import torchtitan: the job file predicts what the hand-written FSDP x TP scenario predicts", "[import][tools]") {
  const std::string dir = temp_dir("torchtitan");
  const auto imp = run_command(kBin + " import torchtitan " + kInputs + "llama3_8b.toml --gpus 16 --hardware h100-sxm -o " + dir + "/s.yaml 2>&1");
  INFO(imp.out);
  REQUIRE(imp.exit_code == 0);
  write(dir + "/hand.yaml",
        "name: hand\nmodel: llama3-8b\nhardware: h100-sxm\ncluster: {gpus: 16}\n"
        "parallelism: {tp: 2, zero_stage: 3, sequence_parallel: true, tp_comm_overlap: false}\n"
        "training: {seq_len: 8192, global_batch: 16, micro_batch: 2, precision: bf16, recompute: selective,\n"
        "           fused_elementwise: true, attention_impl: flash2, grad_reduce_dtype: fp32, tokens: 131072000}\n");
  CHECK(run_json(dir + "/s.yaml") == run_json(dir + "/hand.yaml"));
}

TEST_CASE("import: bad input is one line and exit 2", "[import][tools]") {
  const auto missing = run_command(kBin + " import megatron /nonexistent/launch.sh 2>&1");
  CHECK(missing.exit_code == 2);
  CHECK(missing.out == "error: /nonexistent/launch.sh: cannot read the file\n");
  const auto format = run_command(kBin + " import deepspeed x.json 2>&1");
  CHECK(format.exit_code == 2);
  const auto gpus = run_command(kBin + " import torchtitan " + kInputs + "llama3_8b.toml 2>&1");
  CHECK(gpus.exit_code == 2);
  CHECK(gpus.out.find("--gpus N") != std::string::npos);
}
