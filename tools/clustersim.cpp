// The clustersim command line. Exit codes: 0 success, 2 bad input, 3 plan does not fit in
// memory (the report is still printed), 1 internal error.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <ctime>
#include <exception>
#include <string>
#include <vector>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"
#include "tools/report.hpp"
#include "tools/calibrate.hpp"
#include "tools/validation.hpp"
#include "tools/validation_report.hpp"

namespace {

int run_command(const std::string& path, const std::vector<std::string>& sets, bool json) {
  using namespace clustersim;
  const scenarios::Scenario sc = scenarios::load_scenario_file(path, sets);
  const scenarios::Report report = scenarios::simulate(sc);
  const std::string out = json ? tools::format_json(report) : tools::format_text(report);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (!report.memory.fits()) {
    fmt::print(stderr, "error: {}\n", tools::memory_error(report));
    return 3;
  }
  return 0;
}

int validate_command(const std::string& csv, const std::string& prefix, const std::string& plot, bool json) {
  using namespace clustersim;
  const tools::ValidationSummary summary = tools::validate_table(tools::read_csv_file(csv), prefix);
  if (summary.rows.empty())
    throw scenarios::ScenarioError(fmt::format("{}: no row id starts with '{}'", csv, prefix));
  const std::string out = json ? tools::format_validation_json(summary) : tools::format_validation_text(summary);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (!plot.empty()) {
    std::FILE* f = std::fopen(plot.c_str(), "wb");
    if (!f) throw scenarios::ScenarioError(fmt::format("{}: cannot write the plot", plot));
    const std::string svg = tools::validation_svg(summary);
    std::fwrite(svg.data(), 1, svg.size(), f);
    std::fclose(f);
  }
  return 0;
}

int calibrate_command(const std::string& csv, const std::string& prefix, bool write, bool per_profile) {
  using clustersim::tools::FitMode;
  using namespace clustersim;
  const tools::CalibrationResult result = tools::calibrate(tools::read_csv_file(csv), prefix);
  const std::string out = tools::format_calibration_text(result);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (write) {
    const std::time_t now = std::time(nullptr);
    char date[16];
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    for (const auto& f : tools::write_calibration(result, CLUSTERSIM_PROFILES_DIR, date,
                                                         per_profile ? FitMode::per_profile_pair : result.best_mode()))
      fmt::print("wrote {}\n", f);
    fmt::print("rebuild to embed the updated profiles\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"clustersim: predicts step time, throughput, MFU and memory of large-model training"};
  app.require_subcommand(1);
  std::string scenario;
  std::vector<std::string> sets;
  bool json = false;
  auto* run = app.add_subcommand("run", "simulate one training step of a scenario");
  run->add_option("scenario", scenario, "scenario YAML file")->required();
  run->add_option("--set", sets, "override a scenario key: --set training.micro_batch=2")->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run->add_flag("--json", json, "print one JSON object (SI units) instead of the summary");
  std::string csv = CLUSTERSIM_VALIDATION_CSV, prefix, plot;
  bool validate_json = false;
  auto* validate = app.add_subcommand("validate", "predict published training runs and report the error");
  validate->add_option("--csv", csv, "published runs CSV (default: the project's tests/validation/published.csv)");
  validate->add_option("--source", prefix, "only rows whose id starts with this prefix, e.g. DGXC-L8B");
  validate->add_option("--plot", plot, "write predicted vs measured (log-log SVG) to this file");
  validate->add_flag("--json", validate_json, "print JSON instead of the table");
  auto* calibrate = app.add_subcommand("calibrate", "fit the global calibration constant to the published runs");
  calibrate->add_option("--csv", csv, "published runs CSV (default: the project's tests/validation/published.csv)");
  calibrate->add_option("--source", prefix, "only rows whose id starts with this prefix");
  bool write = false;
  calibrate->add_flag("--write", write, "write the fitted values into the source tree's hardware/profiles/*.yaml");
  bool per_profile = false;
  calibrate->add_flag("--per-profile", per_profile,
                      "with --write: both fractions per profile instead of the mode with the lowest "
                      "leave-one-family-out MAPE");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (*run) return run_command(scenario, sets, json);
    if (*validate) return validate_command(csv, prefix, plot, validate_json);
    if (*calibrate) return calibrate_command(csv, prefix, write, per_profile);
  } catch (const clustersim::scenarios::ScenarioError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "internal error: {}\n", e.what());
    return 1;
  }
  return 0;
}
