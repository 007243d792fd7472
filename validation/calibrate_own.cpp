#include "validation/calibrate_own.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/presets.hpp"
#include "validation/calibrate.hpp"

namespace clustersim::studies {

bool OwnFit::any_fitted() const {
  for (const auto& v : values)
    if (v) return true;
  return false;
}

namespace {

// The rows of `runs` simulated on `base`; the others are listed in fit->skipped.
CsvTable rows_on_base(const CsvTable& runs, OwnFit* fit) {
  CsvTable kept{runs.columns, {}};
  for (const auto& row : runs.rows) {
    const auto id_it = row.find("id");
    const std::string id = id_it == row.end() || id_it->second.empty() ? "(no id)" : id_it->second;
    const RowScenario rs = row_scenario(row);
    if (!rs.reason.empty()) {
      fit->skipped.push_back(id + ": " + rs.reason);
      continue;
    }
    if (!rs.flags.empty()) {
      fit->skipped.push_back(id + ": flagged (" + rs.flags.front() + ")");
      continue;
    }
    try {
      scenarios::Scenario sc = scenarios::load_scenario(rs.scenario, "runs:" + id);
      const std::string profile = sc.hardware_preset.substr(0, sc.hardware_preset.find('+'));
      if (profile != fit->base) {
        fit->skipped.push_back(fmt::format("{}: gpu_type '{}' is profile {}, not {}", id, row.at("gpu_type"), profile, fit->base));
        continue;
      }
      if (fit->base_values.empty())
        for (const auto& p : fitted_parameters()) fit->base_values.push_back(p.field(sc.gpu));
    } catch (const scenarios::ScenarioError& e) {
      fit->skipped.push_back(id + ": " + e.what());
      continue;
    }
    fit->used.push_back(id);
    kept.rows.push_back(row);
  }
  return kept;
}

}  // namespace

OwnFit calibrate_own(const CsvTable& runs, const std::string& base) {
  if (!scenarios::hardware_preset_texts().count(base)) {
    std::string names;
    for (const auto& [k, v] : scenarios::hardware_preset_texts()) names += (names.empty() ? "" : ", ") + k;
    throw scenarios::ScenarioError(fmt::format("--base {}: unknown hardware profile; available: {}", base, names));
  }
  OwnFit fit;
  fit.base = base;
  const CsvTable kept = rows_on_base(runs, &fit);
  const auto& params = fitted_parameters();
  fit.values.assign(params.size(), std::nullopt);
  fit.refused.assign(params.size(), "");
  const int n = int(fit.used.size());
  if (n < kMinRowsForOwnFit) {
    for (auto& r : fit.refused)
      r = fmt::format("{} usable rows on {}; a fitted value needs at least {} (the base profile's value stands)", n, base,
                      kMinRowsForOwnFit);
    return fit;
  }
  const CalibrationResult res = calibrate(kept);
  const ModeFit& global = res.modes.at(FitMode::global);
  fit.at_base = res.at_profiles;
  fit.fitted = global.in_sample;
  if (!global.holdouts.empty()) fit.leave_one_family_out = global.leave_one_family_out;
  for (std::size_t k = 0; k < params.size(); ++k) {
    const double v = res.global.values[k];
    // A value at its bound is where the runs pushed it, not where they agree: refuse it.
    if (std::abs(v - params[k].lo) < 1e-3 || std::abs(v - params[k].hi) < 1e-3)
      fit.refused[k] = fmt::format("the fit ran to its bound ({:.2f}, allowed {:.2f}..{:.2f}): the runs differ from the "
                                   "model by more than this parameter can explain; check the rows",
                                   v, params[k].lo, params[k].hi);
    else
      fit.values[k] = v;
  }
  return fit;
}

namespace {

std::string stats(const ErrorStats& e) {
  return fmt::format("MAPE {:.1f} %, worst {:+.1f} % ({})", 100 * e.mape, 100 * e.worst, e.worst_id);
}

}  // namespace

std::string format_own_fit_text(const OwnFit& fit) {
  std::string o = fmt::format("calibrate on {}: {} usable rows", fit.base, fit.used.size());
  o += fit.used.empty() ? "\n" : fmt::format(" ({})\n", fmt::join(fit.used, ", "));
  for (const auto& s : fit.skipped) o += fmt::format("  skipped {}\n", s);
  const auto& params = fitted_parameters();
  for (std::size_t k = 0; k < params.size(); ++k) {
    const double was = k < fit.base_values.size() ? fit.base_values[k] : NAN;
    if (fit.values[k])
      o += fmt::format("  {}: {:.4f} (base {:.2f})\n", params[k].name, *fit.values[k], was);
    else
      o += fmt::format("  {}: not fitted: {}\n", params[k].name, fit.refused[k]);
  }
  if (fit.any_fitted()) {
    o += fmt::format("  at the base's values: {}\n  fitted (in sample):   {}\n", stats(fit.at_base), stats(fit.fitted));
    if (fit.leave_one_family_out)
      o += fmt::format("  leave one id family out: {}\n", stats(*fit.leave_one_family_out));
  }
  return o;
}

std::string own_profile_yaml(const OwnFit& fit, const std::string& name, const std::string& runs_path,
                             const std::string& date) {
  std::string o;
  o += fmt::format("# Written by `clustersim calibrate --runs {} --base {}` on {}.\n", runs_path, fit.base, date);
  o += fmt::format("# The {} profile with the keys below overriding it (`base:` is resolved when the file is read).\n",
                   fit.base);
  o += fmt::format("# Fitted on {} measured rows of {}: {}\n", fit.used.size(), runs_path, fmt::join(fit.used, ", "));
  o += fmt::format("# Error over those rows: at the base's values {}; fitted (in sample) {}", stats(fit.at_base),
                   stats(fit.fitted));
  o += fit.leave_one_family_out ? fmt::format("; leave one id family out {}.\n", stats(*fit.leave_one_family_out))
                                : ".\n";
  o += fmt::format("name: {}\n", name);
  o += fmt::format("description: \"{} calibrated on {} measured runs ({})\"\n", fit.base, fit.used.size(), date);
  o += fmt::format("base: {}\n", fit.base);
  const auto& params = fitted_parameters();
  for (std::size_t k = 0; k < params.size(); ++k) {
    if (fit.values[k])
      o += fmt::format("{}: {:.4f}  # fitted {} on {} rows (base {:.2f}): {}\n", params[k].name, *fit.values[k], date,
                       fit.used.size(), k < fit.base_values.size() ? fit.base_values[k] : NAN, params[k].meaning);
    else
      o += fmt::format("# {}: not fitted, the base's value stands: {}\n", params[k].name, fit.refused[k]);
  }
  return o;
}

}  // namespace clustersim::studies
