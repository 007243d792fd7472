#include "studies/calibrate.hpp"
#include "studies/validation_moe.hpp"

#include <Eigen/Dense>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

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

ModeFit fit_and_hold_out(FitMode mode, const std::vector<FitRow>& rows, const std::set<std::string>& profiles) {
  ModeFit m;
  Rows all;
  std::map<std::string, Rows> by_family;
  for (const auto& r : rows) all.push_back(&r), by_family[r.family].push_back(&r);
  m.values = fit_mode(mode, all, profiles);
  m.in_sample = stats_at(all, m.values);
  std::vector<RowOutcome> held;
  for (const auto& [fam, members] : by_family) {
    Rows others;
    for (const auto& r : rows)
      if (r.family != fam) others.push_back(&r);
    if (others.empty()) continue;
    FamilyHoldout h;
    h.family = fam;
    h.fitted_without = fit_mode(mode, others, profiles);
    h.held_out = stats_at(members, h.fitted_without, &held);
    m.holdouts.push_back(std::move(h));
  }
  m.leave_one_family_out = stats_of(held);
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
      scenarios::Scenario sc = scenarios::load_scenario_string(rs.yaml, "published.csv:" + id);
      FitRow fr;
      fr.id = id;
      fr.family = family_of(id);
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
  res.rows = int(rows.size());
  std::set<std::string> profiles;
  Rows all;
  std::vector<RowOutcome> now;
  for (const auto& r : rows) {
    profiles.insert(r.hardware);
    all.push_back(&r);
    RowOutcome o;
    o.id = r.id;
    o.error = r.error(r.current);
    now.push_back(o);
  }
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
    if (fit.leave_one_family_out.mape < modes.at(best).leave_one_family_out.mape) best = m;
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
  o += fmt::format("{}: least squares on log(predicted/measured) over {} headline rows\n", parameter_names(), r.rows);
  o += fmt::format("  at the profiles' current values: {}\n", stats_line(r.at_profiles));
  o += fmt::format("  one global set {}\n", joined(r.global.values, "{:.4f}"));
  for (const auto& [mode, fit] : r.modes) {
    o += fmt::format("  {}:\n", name(mode));
    if (mode != FitMode::global)
      for (const auto& [hw, f] : fit.values)
        o += fmt::format("    {:<22} {}  ({} rows)\n", hw, joined(f.values, "{:.4f}"), f.rows);
    o += fmt::format("    in sample:            {}\n", stats_line(fit.in_sample));
    o += fmt::format("    leave one family out: {}\n", stats_line(fit.leave_one_family_out));
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
       "   seconds/token = sum_k C_k / x_k + B; `clustersim calibrate --write` puts the values into\n"
       "   hardware/profiles/*.yaml)\n";
  return o;
}

namespace {

// The lines that replace parameter k's line and its comment block in one profile.
std::vector<std::string> profile_block(const CalibrationResult& r, FitMode mode, std::size_t k, const HardwareFit& fit,
                                       bool own, const std::string& date) {
  const auto& params = fitted_parameters();
  const std::string basis = own ? fmt::format("on the {} headline rows of this profile's die ({})", fit.rows, name(mode))
                            : mode != FitMode::global ? fmt::format("(global fit: fewer than {} headline rows on this profile)", kMinRowsForOwnFit)
                                                      : std::string("(global fit, one set for every profile)");
  const std::string pad(32, ' ');
  const double value = fit.values[k];
  std::vector<std::string> block = {fmt::format("{}: {:.2f}  # FITTED by `clustersim calibrate --write` on {}: {:.4f} {}",
                                                params[k].name, value, date, value, basis)};
  if (k != 0) return block;
  block.push_back(pad + fmt::format("#   of tests/validation/published.csv (global fit over all {} rows: {};", r.rows,
                                    joined(r.global.values, "{:.4f}")));
  block.push_back(pad + fmt::format("#   leave-one-family-out MAPE {:.1f}%).",
                                    100 * r.modes.at(mode).leave_one_family_out.mape));
  for (const auto& p : params) block.push_back(pad + fmt::format("#   {}: {}.", p.name, p.meaning));
  block.push_back(pad + "#   Reading: what remains after the measured in-step kernel rate (in_step_rate_ratio): real");
  block.push_back(pad + "#   shapes vs the benchmarks' best and what the simulator still lacks (framework/CPU");
  block.push_back(pad + "#   overhead, unmodelled kernels): NOT a measured ratio.");
  return block;
}

// The `die:` of a profile file (empty when it names none).
std::string profile_die(const std::filesystem::path& file) {
  std::ifstream in(file);
  for (std::string l; std::getline(in, l);)
    if (l.rfind("die:", 0) == 0) {
      std::string v = l.substr(4, l.find('#') - 4);
      v.erase(0, v.find_first_not_of(' '));
      v.erase(v.find_last_not_of(' ') + 1);
      return v;
    }
  return "";
}

}  // namespace

std::vector<std::string> write_calibration(const CalibrationResult& r, const std::string& profiles_dir,
                                           const std::string& date, FitMode mode) {
  namespace fs = std::filesystem;
  std::vector<std::string> written;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(profiles_dir))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  const auto& values = r.modes.at(mode).values;
  // A profile without rows of its own takes the fit of a profile of its die that has them.
  std::map<std::string, std::string> die;
  for (const auto& file : files) die[file.stem().string()] = profile_die(file);
  for (const auto& file : files) {
    auto it = values.find(file.stem().string());
    if (it == values.end())
      it = std::find_if(values.begin(), values.end(), [&](const auto& v) {
        return !die[file.stem().string()].empty() && die[v.first] == die[file.stem().string()];
      });
    const bool own = mode != FitMode::global && it != values.end() && it->second.rows > 0;
    const HardwareFit& fit = own ? it->second : r.global;
    std::ifstream in(file);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    in.close();
    for (std::size_t k = 0; k < fitted_parameters().size(); ++k) {
      const std::string key = std::string(fitted_parameters()[k].name) + ":";
      auto at = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(key, 0) == 0; });
      if (at == lines.end())
        throw scenarios::ScenarioError(fmt::format("{}: no top-level '{}' line to update", file.string(), key));
      auto end = at + 1;  // the comment block continues on indented lines that hold only a comment
      while (end != lines.end() && !end->empty() && (*end)[0] == ' ' && end->find_first_not_of(' ') != std::string::npos &&
             (*end)[end->find_first_not_of(' ')] == '#')
        ++end;
      const auto block = profile_block(r, mode, k, fit, own, date);
      at = lines.erase(at, end);
      lines.insert(at, block.begin(), block.end());
    }
    std::ofstream out(file);
    for (const auto& l : lines) out << l << '\n';
    written.push_back(file.string());
  }
  return written;
}

}  // namespace clustersim::studies
