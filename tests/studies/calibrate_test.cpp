#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scenarios/error.hpp"
#include "studies/calibrate.hpp"

using namespace clustersim::studies;
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
  const auto& params = fitted_parameters();
  REQUIRE(!params.empty());
  const std::string p0 = params[0].name;
  {
    std::string a = "name: gpu-a\nkernel_gap: 2 us   # cited\n", b = "name: gpu-b\n";
    for (const auto& p : params) {
      a += std::string(p.name) + ": 0.70  # old comment\n                                #   continued\n";
      b += std::string(p.name) + ": 1.0\n";
    }
    std::ofstream(dir / "gpu-a.yaml") << a << "comm_sms: 16\n";
    std::ofstream(dir / "gpu-b.yaml") << b << "node:\n  gpus_per_node: 8\n";
  }
  CalibrationResult r;
  r.rows = 12;
  r.global.values.assign(params.size(), 0.4321);
  r.global.values[0] = 0.6543;
  HardwareFit own;
  own.values.assign(params.size(), 0.5123);
  own.values[0] = 0.5912;
  own.rows = 10;
  r.modes[FitMode::per_profile].values["gpu-a"] = own;
  r.modes[FitMode::per_profile].leave_one_family_out.mape = 0.123;
  const auto written = write_calibration(r, dir.string(), "2030-01-02", FitMode::per_profile);
  CHECK(written.size() == 2);
  const std::string a = slurp(dir / "gpu-a.yaml"), b = slurp(dir / "gpu-b.yaml");
  CHECK_THAT(a, Catch::StartsWith("name: gpu-a\nkernel_gap: 2 us   # cited\n" + p0 + ": 0.59  # FITTED"));
  CHECK_THAT(a, Catch::Contains("on 2030-01-02: 0.5912 on the 10 headline rows of this profile's die (all per profile)"));
  CHECK_THAT(a, Catch::Contains("MAPE 12.3%"));
  CHECK_THAT(a, !Catch::Contains("old comment"));
  CHECK_THAT(a, !Catch::Contains("continued"));
  if (params.size() > 1) CHECK_THAT(a, Catch::Contains("NOT a measured ratio.\n" + std::string(params[1].name) + ": 0.51  # FITTED"));
  CHECK_THAT(a, Catch::EndsWith(params.size() > 1 ? "on the 10 headline rows of this profile's die (all per profile)\ncomm_sms: 16\n"
                                                  : "NOT a measured ratio.\ncomm_sms: 16\n"));
  CHECK_THAT(b, Catch::Contains(p0 + ": 0.65  # FITTED"));
  if (params.size() > 1) CHECK_THAT(b, Catch::Contains(std::string(params[1].name) + ": 0.43  # FITTED"));
  CHECK_THAT(b, Catch::Contains("global fit: fewer than 10 headline rows"));
  CHECK_THAT(b, Catch::EndsWith("node:\n  gpus_per_node: 8\n"));
  r.modes[FitMode::global].values["gpu-a"] = r.global;
  write_calibration(r, dir.string(), "2030-01-03", FitMode::global);  // the global set everywhere
  CHECK_THAT(slurp(dir / "gpu-a.yaml"),
             Catch::Contains(p0 + ": 0.65  # FITTED by `clustersim calibrate --write` on 2030-01-03: 0.6543 (global fit, one set"));
  std::ofstream(dir / "gpu-c.yaml") << "name: gpu-c\n";
  CHECK_THROWS_AS(write_calibration(r, dir.string(), "2030-01-02", FitMode::per_profile),
                  clustersim::scenarios::ScenarioError);
  fs::remove_all(dir);
}
