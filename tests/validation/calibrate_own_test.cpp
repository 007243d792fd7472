#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"
#include "validation/calibrate.hpp"
#include "validation/calibrate_own.hpp"
#include "validation/conventions.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
namespace fs = std::filesystem;

namespace {
const std::string kSrc = CLUSTERSIM_SOURCE_DIR;
const std::string kBin = CLUSTERSIM_BINARY;

// The first `n` DGXC-L8B rows (H100 SXM) of the published set.
studies::CsvTable h100_rows(std::size_t n) {
  auto t = studies::parse_csv(studies::published_csv_text(), "published.csv");
  studies::CsvTable out{t.columns, {}};
  for (const auto& r : t.rows)
    if (r.at("id").rfind("DGXC-L8B-", 0) == 0 && out.rows.size() < n) out.rows.push_back(r);
  return out;
}
}  // namespace

TEST_CASE("calibrate --runs recovers the fraction the runs were generated with (round trip)", "[calibrate]") {
  // Synthetic "measurements": each row simulated at compute_sustained_fraction 0.6; the fit must
  // find 0.6 again, and the written profile must load with that value and the base's other keys.
  auto runs = h100_rows(10);
  REQUIRE(runs.rows.size() == 10);
  for (auto& row : runs.rows) {
    auto sc = scenarios::load_scenario(studies::row_scenario(row).scenario, "row");
    sc.gpu.compute_sustained_fraction = 0.6;
    row["measured_tps_gpu"] = std::to_string(scenarios::simulate(sc).tokens_per_s_per_gpu);
  }
  const auto fit = studies::calibrate_own(runs, "h100-sxm");
  REQUIRE(fit.used.size() == 10);
  REQUIRE(fit.values[0]);
  CHECK(*fit.values[0] == Approx(0.6).epsilon(0.01));
  CHECK(fit.fitted.mape < 0.01);

  const fs::path dir = fs::temp_directory_path() / "clustersim_calibrate_own_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "my-cluster.yaml") << studies::own_profile_yaml(fit, "my-cluster", "runs.csv", "2030-01-02");
  std::ofstream(dir / "s.yaml") << "model: llama2-7b\nhardware: ./my-cluster.yaml\ncluster:\n  gpus: 8\n"
                                   "parallelism:\n  zero_stage: 3\ntraining:\n  seq_len: 4096\n  global_batch: 8\n  micro_batch: 1\n";
  const auto mine = scenarios::load_scenario_file((dir / "s.yaml").string());
  const auto base = scenarios::load_scenario_string("model: llama2-7b\nhardware: h100-sxm\ncluster:\n  gpus: 8\n"
                                                    "training:\n  seq_len: 4096\n  global_batch: 8\n  micro_batch: 1\n");
  CHECK(mine.hardware_preset == "my-cluster");
  CHECK(mine.gpu.compute_sustained_fraction == Approx(*fit.values[0]).margin(1e-4));
  CHECK(mine.gpu.peak(hardware::Precision::bf16).si() == base.gpu.peak(hardware::Precision::bf16).si());
  CHECK(mine.gpu.hbm_capacity.si() == base.gpu.hbm_capacity.si());
  CHECK(mine.network.topology.name == base.network.topology.name);
}

TEST_CASE("calibrate --runs refuses a parameter with too few rows, and rows on other hardware", "[calibrate]") {
  const auto fit = studies::calibrate_own(h100_rows(3), "h100-sxm");
  CHECK(fit.used.size() == 3);
  CHECK_FALSE(fit.any_fitted());
  CHECK_THAT(fit.refused[0], Catch::Contains("at least 10"));
  const auto other = studies::calibrate_own(h100_rows(10), "b200");
  CHECK(other.used.empty());
  REQUIRE(other.skipped.size() == 10);
  CHECK_THAT(other.skipped[0], Catch::Contains("not b200"));
  REQUIRE_THROWS_WITH(studies::calibrate_own(h100_rows(3), "h100-sx"), Catch::Contains("unknown hardware profile"));
}

TEST_CASE("clustersim calibrate --runs writes a new profile that run accepts, and touches no shipped profile",
          "[calibrate][tools]") {
  const fs::path dir = fs::temp_directory_path() / "clustersim_calibrate_cli_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    // Ten measured H100 rows of the published set, as a user's file.
    std::ifstream in(kSrc + "/data/validation/published.csv");
    std::ofstream out(dir / "runs.csv");
    std::string line;
    std::getline(in, line);
    out << line << '\n';
    int n = 0;
    while (std::getline(in, line) && n < 10)
      if (line.rfind("DGXC-L8B-", 0) == 0) out << line << '\n', ++n;
  }
  const auto before = testing::run_command("cd " + kSrc + " && git status --porcelain hardware 2>&1");
  const auto r = testing::run_command("cd " + dir.string() + " && " + kBin +
                                      " calibrate --runs runs.csv --base h100-sxm --out my-cluster.yaml 2>&1");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  REQUIRE(fs::exists(dir / "my-cluster.yaml"));
  std::ofstream(dir / "s.yaml") << "model: llama2-7b\nhardware: ./my-cluster.yaml\ncluster:\n  gpus: 8\n"
                                   "parallelism:\n  zero_stage: 3\ntraining:\n  seq_len: 4096\n  global_batch: 8\n  micro_batch: 1\n";
  const auto run = testing::run_command(kBin + " run " + (dir / "s.yaml").string() + " 2>&1");
  INFO(run.out);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("hardware   my-cluster"));
  CHECK(testing::run_command("cd " + kSrc + " && git status --porcelain hardware 2>&1").out == before.out);
  // Too few rows: nothing written, exit 2 with the reason.
  const auto few = testing::run_command("cd " + dir.string() + " && head -4 runs.csv > few.csv && " + kBin +
                                        " calibrate --runs few.csv --base h100-sxm --out few.yaml 2>&1");
  CHECK(few.exit_code == 2);
  CHECK_THAT(few.out, Catch::Contains("at least 10"));
  CHECK_FALSE(fs::exists(dir / "few.yaml"));
  // A shipped profile is never the output.
  const auto shipped = testing::run_command("cd " + kSrc + " && " + kBin +
                                            " calibrate --runs " + (dir / "runs.csv").string() +
                                            " --base h100-sxm --out hardware/profiles/h100-sxm.yaml 2>&1");
  CHECK(shipped.exit_code == 2);
  CHECK_THAT(shipped.out, Catch::Contains("shipped hardware profile"));
  // The developer path refuses to rewrite the fitted constants from too few rows (it once set all of them to the bounds).
  std::ofstream(dir / "fitted.yaml") << "kept: 1\n";
  const auto dev = testing::run_command("cd " + dir.string() + " && " + kBin +
                                        " calibrate --csv few.csv --write-source-tree --fitted fitted.yaml 2>&1");
  CHECK(dev.exit_code == 2);
  CHECK_THAT(dev.out, Catch::Contains("nothing written"));
  std::ifstream kept(dir / "fitted.yaml");
  std::string text((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>());
  CHECK(text == "kept: 1\n");
}

}}  // namespace CLUSTERSIM_TEST_ID
