// `clustersim calibrate`: the profiles' fitted constants against measured runs.
//   --runs my_runs.csv --base h100-sxm --out my-cluster.yaml   a user's own cluster: a NEW profile file
//   [--csv F] [--source P]                                     the fit report on the published runs
//   --write-source-tree [--fitted F] [--per-profile]            developers: regenerate hardware/fitted.yaml
//   --write-error-bands studies/error_bands.csv                developers: regenerate the error-band table
#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>

#include "scenarios/error.hpp"
#include "scenarios/fitted.hpp"
#include "scenarios/presets.hpp"
#include "validation/calibrate.hpp"
#include "validation/calibrate_own.hpp"
#include "validation/conventions.hpp"
#include "validation/error_band_fit.hpp"
#include "tools/output_file.hpp"
#include "tools/subcommands.hpp"

namespace clustersim::tools {
namespace {

struct CalibrateArgs {
  std::string csv, prefix, fitted = "hardware/fitted.yaml";
  bool write_source_tree = false, per_profile = false;
  std::string runs, base, out, error_bands;
};

// The checked-out commit the fit was made on ("unknown" outside a git checkout).
std::string source_commit() {
  std::string out;
  if (FILE* p = popen("git describe --always --dirty --abbrev=7 2>/dev/null", "r")) {
    char buf[128];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out.empty() ? "unknown" : out;
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  char date[16];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  return date;
}

studies::CsvTable published_or(const std::string& csv) {
  return csv.empty() ? studies::parse_csv(studies::published_csv_text(), studies::kPublishedCsvPath)
                     : studies::read_csv_file(csv);
}

// --out must be a new file of the user's, never a shipped profile (installed or in the source tree).
void check_out_path(const std::string& out) {
  namespace fs = std::filesystem;
  const fs::path p = fs::absolute(out).lexically_normal();
  const bool shipped_name = scenarios::hardware_preset_texts().count(p.stem().string()) > 0;
  if (shipped_name && p.parent_path().filename() == "profiles")
    throw scenarios::ScenarioError(fmt::format(
        "--out {}: that is a shipped hardware profile; write your cluster's profile to a file of its own", out));
}

int run_own(const CalibrateArgs& a) {
  if (a.base.empty() || a.out.empty())
    throw scenarios::ScenarioError("calibrate --runs: --base PROFILE and --out FILE are required (e.g. --base h100-sxm --out my-cluster.yaml)");
  check_out_path(a.out);
  const studies::OwnFit fit = studies::calibrate_own(studies::read_csv_file(a.runs), a.base);
  const std::string text = studies::format_own_fit_text(fit);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (!fit.any_fitted())
    throw scenarios::ScenarioError(fmt::format("calibrate --runs {}: nothing fitted, {} not written (see above)", a.runs, a.out));
  const std::string name = std::filesystem::path(a.out).stem().string();
  write_file_atomically(a.out, studies::own_profile_yaml(fit, name, a.runs, today()));
  fmt::print("wrote {}: use it as `hardware: {}` (relative to the scenario's folder)\n", a.out, a.out);
  return 0;
}

int run_calibrate(const CalibrateArgs& a) {
  if (!a.runs.empty()) return run_own(a);
  if (!a.error_bands.empty()) {
    write_file_atomically(a.error_bands, studies::error_bands_csv(published_or(a.csv)));
    fmt::print("wrote {}; rebuild to embed it\n", a.error_bands);
    return 0;
  }
  const studies::CalibrationResult result = studies::calibrate(published_or(a.csv), a.prefix);
  const std::string out = studies::format_calibration_text(result);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (a.write_source_tree) {
    // Two rows once rewrote every profile to the fit's bounds (issue 17 §3): too few rows, or a value
    // at a bound, writes nothing.
    if (result.rows < studies::kMinRowsForOwnFit)
      throw scenarios::ScenarioError(fmt::format("calibrate --write-source-tree: {} fitted rows; at least {} are needed, nothing written",
                                                 result.rows, studies::kMinRowsForOwnFit));
    for (std::size_t k = 0; k < studies::fitted_parameters().size(); ++k) {
      const auto& p = studies::fitted_parameters()[k];
      const double v = result.global.values[k];
      if (std::abs(v - p.lo) < 1e-3 || std::abs(v - p.hi) < 1e-3)
        throw scenarios::ScenarioError(fmt::format("calibrate --write-source-tree: {} ran to its bound ({:.2f}, allowed "
                                                   "{:.2f}..{:.2f}); nothing written", p.name, v, p.lo, p.hi));
    }
    const auto mode = a.per_profile ? studies::FitMode::per_profile : result.best_mode();
    const studies::FitProvenance from{today(), source_commit(), a.csv.empty() ? studies::kPublishedCsvPath : a.csv};
    write_file_atomically(a.fitted, studies::fitted_yaml(result, mode, scenarios::shipped_profile_dies(), from));
    fmt::print("wrote {}; rebuild to embed it\n", a.fitted);
  }
  return 0;
}

}  // namespace

Subcommand add_calibrate_command(CLI::App& app) {
  auto a = std::make_shared<CalibrateArgs>();
  auto* c = app.add_subcommand("calibrate", "fit the profiles' constants to measured runs (yours: --runs ... --base ... --out ...)");
  auto* runs = c->add_option("--runs", a->runs, "your measured runs (CSV, published.csv columns; see docs/calibrate.md)");
  c->add_option("--base", a->base, "with --runs: the hardware profile the runs were measured on, e.g. h100-sxm")->needs(runs);
  c->add_option("--out", a->out, "with --runs: the NEW profile file to write (base: PROFILE + the fitted keys)")->needs(runs);
  c->add_option("--csv", a->csv, "published runs CSV (default: the project's data/validation/published.csv)")->excludes(runs);
  c->add_option("--source", a->prefix, "only rows whose id starts with this prefix")->excludes(runs);
  auto* write = c->add_flag("--write-source-tree,--write", a->write_source_tree,
                            "developers only: write the fitted values to the source tree's hardware/fitted.yaml (--fitted)")
                    ->excludes(runs);
  c->add_option("--fitted", a->fitted, "with --write-source-tree: the generated file (run from the repository root)")
      ->capture_default_str()
      ->needs(write);
  c->add_flag("--per-profile", a->per_profile,
              "with --write-source-tree: every fraction per profile instead of the mode with the lowest "
              "leave-one-family-out MAPE")
      ->needs(write);
  c->add_option("--write-error-bands", a->error_bands,
                "developers only: regenerate the error-band table (studies/error_bands.csv) from leave-one-family-out residuals")
      ->excludes(runs)
      ->excludes(write);
  return {c, [a] { return run_calibrate(*a); }};
}

}  // namespace clustersim::tools
