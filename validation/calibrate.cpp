#include "validation/calibrate.hpp"
#include "validation/validation_moe.hpp"

#include <Eigen/Dense>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"
#include "validation/holdout_split.hpp"

namespace clustersim::studies {

const std::vector<FittedParameter>& fitted_parameters() {
  static const std::vector<FittedParameter> table = {
      {"compute_sustained_fraction", [](hardware::GpuSpec& g) -> double& { return g.compute_sustained_fraction; }, 0.2,
       hardware::kMaxComputeSustainedFraction, "The share of the in-step GEMM and attention kernel rates a training step sustains (above 1: the step loses less than the in-step ratio measured on attention)"},
  };
  return table;
}

namespace {

std::size_t n_params() { return fitted_parameters().size(); }

struct FitRow {
  std::string id, family, hardware;
  bool holdout = false;  ///< in the held-out split by source and date: predicted, never fitted on
  std::string die;  ///< the profile's GPU die (GpuSpec::die): profiles of one die share their fit
  double measured = 0;
  std::vector<double> current;  ///< the profile's values when loaded
  // Seconds per token per GPU: Σ C[k] / x[k] + B.
  std::vector<double> C;
  double B = 0;
  double seconds(const std::vector<double>& x) const {
    double t = B;
    for (std::size_t k = 0; k < C.size(); ++k) t += C[k] / x[k];
    return t;
  }
  double error(const std::vector<double>& x) const { return (1.0 / seconds(x) - measured) / measured; }
};

void fit_row_model(FitRow& r, scenarios::Scenario sc) {
  const auto& params = fitted_parameters();
  auto spt = [&](std::size_t halved) {
    for (std::size_t k = 0; k < params.size(); ++k) params[k].field(sc.gpu) = k == halved ? 0.5 : 1.0;
    return 1.0 / scenarios::simulate(sc).tokens_per_s_per_gpu;
  };
  const double t1 = spt(params.size());
  r.B = t1;
  for (std::size_t k = 0; k < params.size(); ++k) {
    r.C.push_back(spt(k) - t1);  // halving x_k doubles its term
    r.B -= r.C.back();
  }
}

using Values = std::map<std::string, HardwareFit>;
using Rows = std::vector<const FitRow*>;

ErrorStats stats_of(const std::vector<RowOutcome>& v) {
  std::vector<const RowOutcome*> p;
  for (const auto& o : v) p.push_back(&o);
  return error_stats(p);
}

ErrorStats stats_at(const Rows& rows, const Values& v, std::vector<RowOutcome>* keep = nullptr) {
  std::vector<RowOutcome> out;
  for (const FitRow* r : rows) {
    RowOutcome o;
    o.id = r->id;
    o.family = r->family;
    o.holdout = r->holdout;
    o.simulated = true;
    o.error = r->error(v.at(r->hardware).values);
    out.push_back(o);
  }
  if (keep) keep->insert(keep->end(), out.begin(), out.end());
  return stats_of(out);
}

// Gauss-Newton on r_i = log(t_i(x) · measured_i) from x = 0.7, each x_k kept in its bounds.
// A parameter the rows barely exercise (no attention time) is unidentifiable: damping keeps it
// near the start and the global value is used instead.
HardwareFit fit_all(const Rows& rows) {
  const auto& params = fitted_parameters();
  const Eigen::Index K = Eigen::Index(params.size());
  Eigen::VectorXd x = Eigen::VectorXd::Constant(K, 0.7);
  auto values = [&](const Eigen::VectorXd& v) { return std::vector<double>(v.data(), v.data() + v.size()); };
  for (int it = 0; it < 50; ++it) {
    Eigen::MatrixXd J(rows.size(), K);
    Eigen::VectorXd res(rows.size());
    const std::vector<double> xv = values(x);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const FitRow& r = *rows[i];
      const double t = r.seconds(xv);
      res(Eigen::Index(i)) = std::log(t * r.measured);  // = log(measured / predicted)
      for (Eigen::Index k = 0; k < K; ++k) J(Eigen::Index(i), k) = -r.C[std::size_t(k)] / (x(k) * x(k) * t);
    }
    Eigen::MatrixXd JtJ = J.transpose() * J;
    JtJ.diagonal().array() += 1e-6 * (1.0 + JtJ.diagonal().array());  // Levenberg damping
    Eigen::VectorXd next = x + JtJ.ldlt().solve(-J.transpose() * res);
    for (Eigen::Index k = 0; k < K; ++k) next(k) = std::clamp(next(k), params[std::size_t(k)].lo, params[std::size_t(k)].hi);
    if ((next - x).norm() < 1e-7) break;
    x = next;
  }
  return {values(x), int(rows.size())};
}

// The first parameter alone, the others held at `others` (golden section within its bounds).
HardwareFit fit_first(const Rows& rows, const HardwareFit& others) {
  std::vector<double> x = others.values;
  auto loss = [&](double g) {
    x[0] = g;
    double sum = 0;
    for (const FitRow* r : rows) {
      const double e = std::log(r->seconds(x) * r->measured);
      sum += e * e;
    }
    return sum;
  };
  const double k = (std::sqrt(5.0) - 1) / 2;
  double a = fitted_parameters()[0].lo, b = fitted_parameters()[0].hi, c = b - k * (b - a), d = a + k * (b - a);
  double fc = loss(c), fd = loss(d);
  while (b - a > 1e-5) {
    if (fc < fd) b = d, d = c, fd = fc, c = b - k * (b - a), fc = loss(c);
    else a = c, c = d, fc = fd, d = a + k * (b - a), fd = loss(d);
  }
  x[0] = 0.5 * (a + b);
  return {x, int(rows.size())};
}

// The values of one mode fitted on `rows`: the rows of every profile of the same GPU die are
// fitted together (H100 SXM, H200 and H800 are one die: a constant fitted per profile made H200,
// the same die with more and faster HBM, predict slower than H100; issue 31 item 3), and a die
// with too few rows takes the global set.
Values fit_mode(FitMode mode, const Rows& rows, const std::set<std::string>& profiles) {
  HardwareFit global = fit_all(rows);
  global.rows = 0;
  std::map<std::string, std::string> die_of;
  for (const FitRow* r : rows) die_of[r->hardware] = r->die;
  Values v;
  for (const auto& hw : profiles) {
    const auto die = die_of.find(hw);
    Rows mine;
    for (const FitRow* r : rows)
      if (die != die_of.end() ? r->die == die->second : r->hardware == hw) mine.push_back(r);
    // Issue 13 item 9: a profile with fewer than kMinRowsForOwnFit headline rows gets no fit of its own.
    if (mode == FitMode::global || int(mine.size()) < kMinRowsForOwnFit) v[hw] = global;
    else v[hw] = mode == FitMode::per_profile ? fit_all(mine) : fit_first(mine, global);
  }
  return v;
}

// Fits on the tuning rows only; every row, held-out split included, is then predicted by a fit
// without its family (leave-one-family-out), and the split also at the mode's values.
ModeFit fit_and_hold_out(FitMode mode, const std::vector<FitRow>& rows, const std::set<std::string>& profiles) {
  ModeFit m;
  Rows tuning, split;
  std::map<std::string, Rows> by_family;
  for (const auto& r : rows) (r.holdout ? split : tuning).push_back(&r), by_family[r.family].push_back(&r);
  m.values = fit_mode(mode, tuning, profiles);
  m.in_sample = stats_at(tuning, m.values);
  m.holdout_split = stats_at(split, m.values);
  std::vector<RowOutcome> held;
  for (const auto& [fam, members] : by_family) {
    Rows others;
    for (const FitRow* r : tuning)
      if (r->family != fam) others.push_back(r);
    if (others.empty()) continue;
    FamilyHoldout h;
    h.family = fam;
    h.fitted_without = fit_mode(mode, others, profiles);
    h.held_out = stats_at(members, h.fitted_without, &held);
    m.holdouts.push_back(std::move(h));
  }
  m.leave_one_family_out = stats_of(held);
  std::vector<const RowOutcome*> tuning_held;
  for (const auto& o : held)
    if (!o.holdout) tuning_held.push_back(&o);
  m.leave_one_family_out_tuning = error_stats(tuning_held);
  m.held_out_rows = std::move(held);
  return m;
}

// The headline rows of the table, each with its row model (simulated 1 + K times).
std::vector<FitRow> fit_rows(const CsvTable& table, const std::string& id_prefix) {
  std::vector<FitRow> rows;
  const auto& params = fitted_parameters();
  for (const auto& row : table.rows) {
    const auto id_it = row.find("id");
    const std::string id = id_it == row.end() ? "" : id_it->second;
    if (!id_prefix.empty() && id.rfind(id_prefix, 0) != 0) continue;
    if (is_moe_row(row)) continue;  // MoE rows stay out of sample for the dense fit (validation_moe.hpp)
    const RowScenario rs = row_scenario(row);
    if (!rs.reason.empty() || !rs.flags.empty()) continue;
    try {
      scenarios::Scenario sc = scenarios::load_scenario(rs.scenario, "published.csv:" + id);
      FitRow fr;
      fr.id = id;
      fr.family = family_of(id);
      fr.holdout = in_holdout_split(row);
      fr.hardware = sc.hardware_preset.substr(0, sc.hardware_preset.find('+'));  // "x+overrides" → "x"
      fr.die = sc.gpu.die;
      fr.measured = std::stod(row.at("measured_tps_gpu"));
      for (const auto& p : params) fr.current.push_back(p.field(sc.gpu));
      fit_row_model(fr, sc);
      rows.push_back(std::move(fr));
    } catch (const scenarios::ScenarioError&) {
      // Not simulated yet: validate lists it with its reason.
    }
  }
  return rows;
}

}  // namespace

CalibrationResult calibrate(const CsvTable& table, const std::string& id_prefix) {
  const std::vector<FitRow> rows = fit_rows(table, id_prefix);
  if (rows.empty()) throw scenarios::ScenarioError("calibrate: no simulated, unflagged rows to fit");
  CalibrationResult res;
  std::set<std::string> profiles;
  Rows all;  // the tuning rows: the held-out split is never fitted on
  std::vector<RowOutcome> now;
  for (const auto& r : rows) {
    profiles.insert(r.hardware);
    if (r.holdout) {
      ++res.holdout_rows;
      continue;
    }
    all.push_back(&r);
    RowOutcome o;
    o.id = r.id;
    o.error = r.error(r.current);
    now.push_back(o);
  }
  if (all.empty()) throw scenarios::ScenarioError("calibrate: every fittable row is in the held-out split");
  res.rows = int(all.size());
  res.at_profiles = stats_of(now);
  res.global = fit_all(all);
  res.global.rows = 0;
  for (FitMode m : {FitMode::global, FitMode::per_profile_first, FitMode::per_profile})
    if (m != FitMode::per_profile_first || n_params() > 1) res.modes[m] = fit_and_hold_out(m, rows, profiles);
  return res;
}

namespace {

// The profiles' mode refitted without each family in turn (what `validate` reports out of sample).
std::optional<ModeFit> profiles_mode_holdouts(const CsvTable& table, const std::string& id_prefix, FitMode* mode) {
  const std::vector<FitRow> rows = fit_rows(table, id_prefix);
  if (rows.empty()) return std::nullopt;
  std::set<std::string> profiles;
  for (const auto& r : rows) profiles.insert(r.hardware);
  *mode = kProfilesMode == FitMode::per_profile_first && n_params() == 1 ? FitMode::per_profile : kProfilesMode;
  ModeFit fit = fit_and_hold_out(*mode, rows, profiles);
  if (fit.holdouts.empty()) return std::nullopt;
  return fit;
}

}  // namespace

std::vector<RowOutcome> held_out_rows(const CsvTable& table, const std::string& id_prefix) {
  FitMode mode;
  const auto fit = profiles_mode_holdouts(table, id_prefix, &mode);
  return fit ? fit->held_out_rows : std::vector<RowOutcome>{};
}

void add_out_of_sample(const CsvTable& table, const std::string& id_prefix, ValidationSummary* summary) {
  FitMode mode;
  const auto found = profiles_mode_holdouts(table, id_prefix, &mode);
  if (!found) return;
  const ModeFit& fit = *found;
  summary->held_out_mode = name(mode);
  summary->overall.held_out = fit.leave_one_family_out;
  summary->held_out_rows = fit.held_out_rows;
  for (auto& f : summary->families)
    for (const auto& h : fit.holdouts)
      if (h.family == f.family) f.held_out = h.held_out;
}

const char* name(FitMode m) {
  switch (m) {
    case FitMode::global: return "one global set";
    case FitMode::per_profile_first: return "first per profile, the rest global";
    case FitMode::per_profile: return "all per profile";
  }
  return "?";
}

FitMode CalibrationResult::best_mode() const {
  FitMode best = FitMode::global;
  for (const auto& [m, fit] : modes)
    if (fit.leave_one_family_out_tuning.mape < modes.at(best).leave_one_family_out_tuning.mape) best = m;
  return best;
}

namespace {

std::string stats_line(const ErrorStats& e) {
  return fmt::format("n={} MAPE {:.1f}%  median {:.1f}%  worst {:+.1f}% ({})", e.count, 100 * e.mape, 100 * e.median_abs,
                     100 * e.worst, e.worst_id);
}

std::string joined(const std::vector<double>& v, const char* spec) {
  std::string s;
  for (std::size_t k = 0; k < v.size(); ++k) s += (k ? " / " : "") + fmt::format(fmt::runtime(spec), v[k]);
  return s;
}

std::string parameter_names() {
  std::string s;
  for (const auto& p : fitted_parameters()) s += (s.empty() ? "" : " / ") + std::string(p.name);
  return s;
}

}  // namespace

std::string format_calibration_text(const CalibrationResult& r) {
  std::string o;
  o += fmt::format("{}: least squares on log(predicted/measured) over {} headline rows ({} more in the held-out split "
                   "by source and date, never fitted on)\n",
                   parameter_names(), r.rows, r.holdout_rows);
  o += fmt::format("  at the profiles' current values: {}\n", stats_line(r.at_profiles));
  o += fmt::format("  one global set {}\n", joined(r.global.values, "{:.4f}"));
  for (const auto& [mode, fit] : r.modes) {
    o += fmt::format("  {}:\n", name(mode));
    if (mode != FitMode::global)
      for (const auto& [hw, f] : fit.values)
        o += fmt::format("    {:<22} {}  ({} rows)\n", hw, joined(f.values, "{:.4f}"), f.rows);
    o += fmt::format("    in sample:            {}\n", stats_line(fit.in_sample));
    o += fmt::format("    held-out split:       {}\n", stats_line(fit.holdout_split));
    o += fmt::format("    leave one family out: {} (tuning rows: {})\n", stats_line(fit.leave_one_family_out),
                     stats_line(fit.leave_one_family_out_tuning));
  }
  const FitMode best = r.best_mode();
  o += fmt::format("  leave one source family out, {} (fit on the other families, predict this one):\n", name(best));
  for (const auto& h : r.modes.at(best).holdouts) {
    std::string values;
    for (const auto& [hw, f] : h.fitted_without)
      values += fmt::format(" {}={}{}", hw, joined(f.values, "{:.2f}"), f.rows ? "" : "(global)");
    o += fmt::format("    {:<14} held out: {}\n      fitted without it:{}\n", h.family, stats_line(h.held_out), values);
  }
  o += fmt::format("  lowest leave-one-family-out MAPE: {} (what --write writes)\n", name(best));
  o += "  (each row is simulated with every parameter at 1 and each in turn at 0.5, and modelled as\n"
       "   seconds/token = sum_k C_k / x_k + B; `clustersim calibrate --write-source-tree` writes the values\n"
       "   to hardware/fitted.yaml)\n";
  return o;
}

namespace {

// The comment block that opens hardware/fitted.yaml.
std::string fitted_header() {
  std::string o =
      "# Generated by `clustersim calibrate --write-source-tree`; do not edit by hand. The fitted constants of\n"
      "# the hardware profiles by GPU die: hardware/profiles/*.yaml keep none, the profile loader\n"
      "# (scenarios/fitted.cpp) takes a profile's value from its die here unless the profile sets the key\n"
      "# itself. value: what the loader uses (two decimals); fit: the least-squares value. A die with fewer\n"
      "# than 10 headline rows takes the global set (rows: 0). tests/validation/fitted_values_test.cpp refits\n"
      "# on the checked-out tree and compares (within 0.005). The held-out split by source and date\n"
      "# (data/validation/holdout_split.csv) is never fitted on: holdout_split_mape is its error at these values.\n";
  for (const auto& p : fitted_parameters()) o += fmt::format("#   {}: {}.\n", p.name, p.meaning);
  o += "#   Reading: what remains after the measured in-step kernel rate (in_step_rate_ratio): real shapes vs\n"
       "#   the benchmarks' best and what the simulator still lacks (framework/CPU overhead, unmodelled\n"
       "#   kernels): NOT a measured ratio.\n";
  return o;
}

std::string fitted_values(const HardwareFit& fit, const std::string& indent) {
  std::string o;
  for (std::size_t k = 0; k < fitted_parameters().size(); ++k)
    o += fmt::format("{}{}: {{value: {:.2f}, fit: {:.4f}}}\n", indent, fitted_parameters()[k].name, fit.values[k], fit.values[k]);
  return o;
}

}  // namespace

std::string fitted_yaml(const CalibrationResult& r, FitMode mode, const std::map<std::string, std::string>& profile_dies,
                        const FitProvenance& p) {
  std::string o = fitted_header();
  o += fmt::format("fitted_on: {}\ncommit: {}\nsource: {}\nmode: {}\nrows: {}\nleave_one_family_out_mape: {:.4f}\n",
                   p.date, p.commit, p.source, name(mode), r.rows, r.modes.at(mode).leave_one_family_out.mape);
  o += fmt::format("holdout_rows: {}\nholdout_split_mape: {:.4f}\n", r.holdout_rows, r.modes.at(mode).holdout_split.mape);
  o += "global:\n" + fitted_values(r.global, "  ");
  std::map<std::string, std::vector<std::string>> profiles_of;
  for (const auto& [profile, die] : profile_dies) profiles_of[die].push_back(profile);
  const auto& values = r.modes.at(mode).values;
  o += "dies:\n";
  for (const auto& [die, profiles] : profiles_of) {
    // The die's own fit: that of a profile of the die that has headline rows (fit_mode fits a die's rows together).
    const HardwareFit* own = nullptr;
    for (const auto& profile : profiles) {
      const auto it = values.find(profile);
      if (mode != FitMode::global && it != values.end() && it->second.rows > 0) own = &it->second;
    }
    std::string list;
    for (const auto& profile : profiles) list += (list.empty() ? "" : ", ") + profile;
    o += fmt::format("  {}:\n    rows: {}\n    profiles: {}\n", die, own ? own->rows : 0, list);
    o += fitted_values(own ? *own : r.global, "    ");
  }
  return o;
}

}  // namespace clustersim::studies
