// Runs every scenarios/validation/*.yaml (one per published measured run whose parallelism
// the simulator covers) and compares predicted with measured tokens/s per GPU, read from the
// scenario's "# measured_tps_gpu: X" header line (copied from shared/validation/published.csv).
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace fs = std::filesystem;
using namespace clustersim;

namespace {

double measured_tps_gpu(const fs::path& file) {
  std::ifstream in(file);
  const std::string key = "# measured_tps_gpu:";
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) return std::stod(line.substr(key.size()));
  return 0;
}

// "# headline: no" marks a case kept out of the error figure, with its reason in the file.
bool headline(const fs::path& file) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("# headline: no", 0) == 0) return false;
  return true;
}

}  // namespace

TEST_CASE("validation scenarios: predicted vs measured tokens/s per GPU", "[scenarios][validation]") {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(CLUSTERSIM_SOURCE_DIR) / "scenarios" / "validation"))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 40);
  double abs_err_sum = 0;
  int scored = 0;
  std::string table = fmt::format("{:<16} {:>12} {:>12} {:>8}\n", "case", "measured", "predicted", "error");
  for (const auto& f : files) {
    const double measured = measured_tps_gpu(f);
    INFO(f.string());
    REQUIRE(measured > 0);
    const auto report = scenarios::simulate(scenarios::load_scenario_file(f.string()));
    const double predicted = report.tokens_per_s_per_gpu;
    const double err = predicted / measured - 1;
    const bool scored_case = headline(f);
    table += fmt::format("{:<16} {:>12.2f} {:>12.2f} {:>+7.1f}%{}{}\n", report.scenario.name, measured, predicted,
                         100 * err, scored_case ? "" : "  (not scored)", report.memory.fits() ? "" : "  (does not fit)");
    if (!scored_case) continue;
    REQUIRE(report.memory.fits());
    abs_err_sum += std::abs(err);
    ++scored;
    // No scored case may be off by a factor: that would be a modelling bug, not calibration.
    CHECK(std::abs(err) < 0.7);
  }
  const double mape = abs_err_sum / scored;
  table += fmt::format("mean absolute percentage error: {:.1f}% over {} scored cases\n", 100 * mape, scored);
  std::fputs(table.c_str(), stdout);
  // Issue #3 targets 15%; the compute model is still optimistic (see the issue note). This
  // bound guards against regressions.
  REQUIRE(mape < 0.30);
}
