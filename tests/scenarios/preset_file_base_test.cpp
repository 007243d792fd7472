#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
namespace fs = std::filesystem;

namespace {
const char* kScenario = "model: llama2-7b\nhardware: ./gpu.yaml\ncluster:\n  gpus: 8\n"
                        "training:\n  seq_len: 4096\n  global_batch: 8\n  micro_batch: 1\n";

fs::path fresh_dir(const char* name) {
  const fs::path dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "s.yaml") << kScenario;
  return dir;
}
}  // namespace

TEST_CASE("a profile file's base: is resolved, its own keys override the base's", "[scenarios][preset_files]") {
  const fs::path dir = fresh_dir("clustersim_preset_base_test");
  std::ofstream(dir / "gpu.yaml") << "name: tuned\nbase: h100-sxm\ncompute_sustained_fraction: 0.5\nmemory: 96 GB\n";
  const auto mine = scenarios::load_scenario_file((dir / "s.yaml").string());
  const auto base = scenarios::load_scenario_string(std::string(kScenario).replace(std::string(kScenario).find("./gpu.yaml"), 10, "h100-sxm"));
  CHECK(mine.hardware_preset == "tuned");
  CHECK(mine.gpu.compute_sustained_fraction == 0.5);
  CHECK(mine.gpu.hbm_capacity.si() == 96e9);
  CHECK(mine.gpu.sms == base.gpu.sms);
  CHECK(mine.gpu.peak(hardware::Precision::bf16).si() == base.gpu.peak(hardware::Precision::bf16).si());

  // A base that is itself a file, relative to the file that names it.
  std::ofstream(dir / "gpu.yaml") << "base: sub/middle.yaml\nmemory: 90 GB\n";
  std::ofstream(dir / "sub" / "middle.yaml") << "base: h100-sxm\ncompute_sustained_fraction: 0.4\nmemory: 70 GB\n";
  const auto chained = scenarios::load_scenario_file((dir / "s.yaml").string());
  CHECK(chained.gpu.compute_sustained_fraction == 0.4);
  CHECK(chained.gpu.hbm_capacity.si() == 90e9);
  CHECK(chained.hardware_preset == "gpu");
}

TEST_CASE("an unknown base in a profile file names the file and line", "[scenarios][preset_files]") {
  const fs::path dir = fresh_dir("clustersim_preset_base_bad_test");
  std::ofstream(dir / "gpu.yaml") << "name: tuned\nbase: h100-sx\n";
  REQUIRE_THROWS_WITH(scenarios::load_scenario_file((dir / "s.yaml").string()),
                      Catch::Contains("gpu.yaml:2:7: base: unknown hardware preset 'h100-sx'") &&
                          Catch::Contains("h100-sxm"));
  std::ofstream(dir / "gpu.yaml") << "base: gpu.yaml\n";  // names itself
  REQUIRE_THROWS_WITH(scenarios::load_scenario_file((dir / "s.yaml").string()), Catch::Contains("chained through base"));
}

TEST_CASE("a model file's base: is resolved the same way", "[scenarios][preset_files]") {
  const fs::path dir = fs::temp_directory_path() / "clustersim_preset_base_model_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "half.yaml") << "name: llama2-7b-half\nbase: llama2-7b\nlayers: 16\n";
  std::ofstream(dir / "s.yaml") << "model: ./half.yaml\nhardware: h100-sxm\ncluster:\n  gpus: 8\n"
                                   "training:\n  seq_len: 4096\n  global_batch: 8\n  micro_batch: 1\n";
  const auto half = scenarios::load_scenario_file((dir / "s.yaml").string());
  const auto full = scenarios::load_scenario_string("model: llama2-7b\nhardware: h100-sxm\ncluster:\n  gpus: 8\n"
                                                    "training:\n  seq_len: 4096\n  global_batch: 8\n  micro_batch: 1\n");
  CHECK(half.model.layers == 16);
  CHECK(half.model.hidden == full.model.hidden);
  CHECK(half.model.vocab == full.model.vocab);
  CHECK(half.model_preset == "llama2-7b-half");
}

}}  // namespace CLUSTERSIM_TEST_ID
