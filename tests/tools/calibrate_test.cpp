#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scenarios/error.hpp"
#include "tools/calibrate.hpp"

using namespace clustersim::tools;
namespace fs = std::filesystem;

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("calibrate --write replaces the fitted line and its comment block, nothing else", "[tools][calibrate]") {
  const fs::path dir = fs::temp_directory_path() / "clustersim_calibrate_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    std::ofstream(dir / "gpu-a.yaml") << "name: gpu-a\nkernel_gap: 2 us   # cited\n"
                                         "gemm_sustained_fraction: 0.70  # old comment\n"
                                         "                                #   continued\n"
                                         "attention_sustained_fraction: 0.70  # old\n"
                                         "comm_sms: 16\n";
    std::ofstream(dir / "gpu-b.yaml") << "name: gpu-b\ngemm_sustained_fraction: 1.0\nattention_sustained_fraction: 1.0\n"
                                         "node:\n  gpus_per_node: 8\n";
  }
  CalibrationResult r;
  r.rows = 12;
  r.global = {0.6543, 0.4321, 0};
  r.per_hardware["gpu-a"] = {0.5912, 0.5123, 10};
  r.leave_one_family_out.mape = 0.123;
  const auto written = write_calibration(r, dir.string(), "2030-01-02", FitMode::per_profile_pair);
  CHECK(written.size() == 2);
  const std::string a = slurp(dir / "gpu-a.yaml"), b = slurp(dir / "gpu-b.yaml");
  CHECK_THAT(a, Catch::StartsWith("name: gpu-a\nkernel_gap: 2 us   # cited\ngemm_sustained_fraction: 0.59  # FITTED"));
  CHECK_THAT(a, Catch::Contains("on 2030-01-02: 0.5912 on this profile's 10 headline rows (both per profile)"));
  CHECK_THAT(a, Catch::Contains("MAPE 12.3%"));
  CHECK_THAT(a, !Catch::Contains("old comment"));
  CHECK_THAT(a, !Catch::Contains("continued"));
  CHECK_THAT(a, Catch::Contains("NOT measured ratios.\nattention_sustained_fraction: 0.51  # FITTED"));
  CHECK_THAT(a, Catch::EndsWith("0.5123 on this profile's 10 headline rows (both per profile)\ncomm_sms: 16\n"));
  CHECK_THAT(b, Catch::Contains("gemm_sustained_fraction: 0.65  # FITTED"));
  CHECK_THAT(b, Catch::Contains("attention_sustained_fraction: 0.43  # FITTED"));
  CHECK_THAT(b, Catch::Contains("global fit: fewer than 10 headline rows"));
  CHECK_THAT(b, Catch::EndsWith("node:\n  gpus_per_node: 8\n"));
  r.global_values["gpu-a"] = r.global;
  write_calibration(r, dir.string(), "2030-01-03", FitMode::global_pair);  // the global pair everywhere
  CHECK_THAT(slurp(dir / "gpu-a.yaml"), Catch::Contains("gemm_sustained_fraction: 0.65  # FITTED by `clustersim calibrate --write` on 2030-01-03: 0.6543 (global fit, one pair"));
  std::ofstream(dir / "gpu-c.yaml") << "name: gpu-c\n";
  CHECK_THROWS_AS(write_calibration(r, dir.string(), "2030-01-02", FitMode::per_profile_pair),
                  clustersim::scenarios::ScenarioError);
  fs::remove_all(dir);
}

TEST_CASE("calibrate --write in a one-scalar mode writes one fitted value per profile", "[tools][calibrate]") {
  const fs::path dir = fs::temp_directory_path() / "clustersim_calibrate_scalar_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* n : {"gpu-a", "gpu-b"})
    std::ofstream(dir / (std::string(n) + ".yaml")) << "name: " << n << "\ngemm_sustained_fraction: 0.70  # old\n"
                                                       "attention_sustained_fraction: 0.70  # old\n";
  CalibrationResult r;
  r.rows = 30;
  r.per_hardware_scalar_gemm["gpu-a"] = {0.8123, 1.0, 25};
  r.per_hardware_scalar_gemm["gpu-b"] = {0.7456, 1.0, 0};  // fewer than kMinRowsForOwnFit: the global value
  r.leave_one_family_out_scalar_gemm.mape = 0.071;
  write_calibration(r, dir.string(), "2030-01-04", FitMode::scalar_gemm);
  const std::string a = slurp(dir / "gpu-a.yaml"), b = slurp(dir / "gpu-b.yaml");
  CHECK_THAT(a, Catch::Contains("gemm_sustained_fraction: 0.81  # FITTED by `clustersim calibrate --write` on 2030-01-04: 0.8123 on this profile's 25 headline rows"));
  CHECK_THAT(a, Catch::Contains("MAPE 7.1%"));
  CHECK_THAT(a, Catch::Contains("attention_sustained_fraction: 1.00  # NOT fitted"));
  CHECK_THAT(b, Catch::Contains("gemm_sustained_fraction: 0.75  # FITTED") && Catch::Contains("fewer than 10 headline rows"));
  fs::remove_all(dir);
}
