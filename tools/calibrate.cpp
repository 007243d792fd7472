#include "tools/calibrate.hpp"

#include <Eigen/Dense>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace clustersim::tools {
namespace {

struct FitRow {
  std::string id, family, hardware;
  double measured = 0;
  HardwareFit current;  ///< the profile's values when loaded
  // Seconds per token per GPU: G/g + A/a + B.
  double G = 0, A = 0, B = 0;
  double seconds(double g, double a) const { return G / g + A / a + B; }
  double predict(double g, double a) const { return 1.0 / seconds(g, a); }
};

void fit_row_model(FitRow& r, scenarios::Scenario sc) {
  auto spt = [&](double g, double a) {
    sc.gpu.gemm_sustained_fraction = g;
    sc.gpu.attention_sustained_fraction = a;
    return 1.0 / scenarios::simulate(sc).tokens_per_s_per_gpu;
  };
  const double t11 = spt(1, 1), tg = spt(0.5, 1), ta = spt(1, 0.5);
  r.G = tg - t11;  // halving g doubles the GEMM term
  r.A = ta - t11;
  r.B = t11 - r.G - r.A;
}

using Values = std::map<std::string, HardwareFit>;

ErrorStats stats_at(const std::vector<const FitRow*>& rows, const Values& v, std::vector<RowOutcome>* keep = nullptr) {
  std::vector<RowOutcome> out;
  for (const FitRow* r : rows) {
    const HardwareFit& f = v.at(r->hardware);
    RowOutcome o;
    o.id = r->id;
    o.simulated = true;
    o.error = (r->predict(f.gemm, f.attention) - r->measured) / r->measured;
    out.push_back(o);
  }
  std::vector<const RowOutcome*> ptrs;
  for (const auto& o : out) ptrs.push_back(&o);
  ErrorStats s = error_stats(ptrs);
  if (keep) keep->insert(keep->end(), out.begin(), out.end());
  return s;
}

// Gauss-Newton on r_i = log(t_i(g, a) · measured_i), t_i = G/g + A/a + B, from (0.7, 0.7); both
// fractions kept in [0.2, 1]. When the rows carry (almost) no attention time, `a` is
// unidentifiable: damping keeps it near the start and the global value is used instead.
HardwareFit fit_pair(const std::vector<const FitRow*>& rows) {
  Eigen::Vector2d x(0.7, 0.7);
  for (int it = 0; it < 50; ++it) {
    Eigen::MatrixXd J(rows.size(), 2);
    Eigen::VectorXd res(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const FitRow& r = *rows[i];
      const double t = r.seconds(x(0), x(1));
      res(Eigen::Index(i)) = std::log(t * r.measured);  // = log(measured / predicted)
      J(Eigen::Index(i), 0) = -r.G / (x(0) * x(0) * t);
      J(Eigen::Index(i), 1) = -r.A / (x(1) * x(1) * t);
    }
    Eigen::Matrix2d JtJ = J.transpose() * J;
    JtJ.diagonal().array() += 1e-6 * (1.0 + JtJ.diagonal().array());  // Levenberg damping
    const Eigen::Vector2d step = JtJ.ldlt().solve(-J.transpose() * res);
    const Eigen::Vector2d next = (x + step).cwiseMax(0.2).cwiseMin(1.0);
    if ((next - x).norm() < 1e-7) break;
    x = next;
  }
  return {x(0), x(1), int(rows.size())};
}

// The GEMM fraction alone, the attention fraction held at `attention` (golden section on [0.2, 1]).
double fit_gemm(const std::vector<const FitRow*>& rows, double attention) {
  auto loss = [&](double g) {
    double sum = 0;
    for (const FitRow* r : rows) {
      const double e = std::log(r->seconds(g, attention) * r->measured);
      sum += e * e;
    }
    return sum;
  };
  const double k = (std::sqrt(5.0) - 1) / 2;
  double a = 0.2, b = 1.0, c = b - k * (b - a), d = a + k * (b - a);
  double fc = loss(c), fd = loss(d);
  while (b - a > 1e-5) {
    if (fc < fd) b = d, d = c, fd = fc, c = b - k * (b - a), fc = loss(c);
    else a = c, c = d, fc = fd, d = a + k * (b - a), fd = loss(d);
  }
  return 0.5 * (a + b);
}

// One scalar x (golden section on [0.2, 1]): the GEMM rate times x, the attention rate times x
// too when `both`, else at 1.
HardwareFit fit_scalar(const std::vector<const FitRow*>& rows, bool both) {
  auto loss = [&](double x) {
    double sum = 0;
    for (const FitRow* r : rows) {
      const double e = std::log(r->seconds(x, both ? x : 1.0) * r->measured);
      sum += e * e;
    }
    return sum;
  };
  const double k = (std::sqrt(5.0) - 1) / 2;
  double a = 0.2, b = 1.0, c = b - k * (b - a), d = a + k * (b - a);
  double fc = loss(c), fd = loss(d);
  while (b - a > 1e-5) {
    if (fc < fd) b = d, d = c, fd = fc, c = b - k * (b - a), fc = loss(c);
    else a = c, c = d, fc = fd, d = a + k * (b - a), fd = loss(d);
  }
  const double x = 0.5 * (a + b);
  return {x, both ? x : 1.0, int(rows.size())};
}

// Fits each profile's rows with `fit_one`; profiles with fewer than kMinRowsForOwnFit rows get
// the global fit (`global_fit`, default: the pair).
Values fit_each_profile(const std::vector<const FitRow*>& rows, const std::set<std::string>& profiles,
                        const std::function<HardwareFit(const std::vector<const FitRow*>&, const HardwareFit&)>& fit_one,
                        const std::function<HardwareFit(const std::vector<const FitRow*>&)>& global_fit = fit_pair) {
  HardwareFit global = global_fit(rows);
  global.rows = 0;
  Values v;
  for (const auto& hw : profiles) {
    std::vector<const FitRow*> mine;
    for (const FitRow* r : rows)
      if (r->hardware == hw) mine.push_back(r);
    v[hw] = int(mine.size()) < kMinRowsForOwnFit ? global : fit_one(mine, global);
  }
  return v;
}

Values fit_per_hardware_gemm(const std::vector<const FitRow*>& rows, const std::set<std::string>& profiles) {
  return fit_each_profile(rows, profiles, [](const std::vector<const FitRow*>& mine, const HardwareFit& global) {
    return HardwareFit{fit_gemm(mine, global.attention), global.attention, int(mine.size())};
  });
}

Values fit_per_hardware_scalar(const std::vector<const FitRow*>& rows, const std::set<std::string>& profiles, bool both) {
  return fit_each_profile(
      rows, profiles, [both](const std::vector<const FitRow*>& mine, const HardwareFit&) { return fit_scalar(mine, both); },
      [both](const std::vector<const FitRow*>& all) { return fit_scalar(all, both); });
}

Values fit_per_hardware(const std::vector<const FitRow*>& rows, const std::set<std::string>& profiles) {
  return fit_each_profile(rows, profiles,
                          [](const std::vector<const FitRow*>& mine, const HardwareFit&) { return fit_pair(mine); });
}

}  // namespace

CalibrationResult calibrate(const CsvTable& table, const std::string& id_prefix) {
  std::vector<FitRow> rows;
  std::set<std::string> profiles;
  for (const auto& row : table.rows) {
    const auto id_it = row.find("id");
    const std::string id = id_it == row.end() ? "" : id_it->second;
    if (!id_prefix.empty() && id.rfind(id_prefix, 0) != 0) continue;
    const RowScenario rs = row_scenario(row);
    if (!rs.reason.empty() || !rs.flags.empty()) continue;
    try {
      const scenarios::Scenario sc = scenarios::load_scenario_string(rs.yaml, "published.csv:" + id);
      FitRow fr;
      fr.id = id;
      fr.family = family_of(id);
      fr.hardware = sc.hardware_preset.substr(0, sc.hardware_preset.find('+'));  // "x+overrides" → "x"
      fr.measured = std::stod(row.at("measured_tps_gpu"));
      fr.current = {sc.gpu.gemm_sustained_fraction, sc.gpu.attention_sustained_fraction, 0};
      fit_row_model(fr, sc);
      profiles.insert(fr.hardware);
      rows.push_back(std::move(fr));
    } catch (const scenarios::ScenarioError&) {
      // Not simulated yet: validate lists it with its reason.
    }
  }
  CalibrationResult res;
  res.rows = int(rows.size());
  if (rows.empty()) throw scenarios::ScenarioError("calibrate: no simulated, unflagged rows to fit");
  std::vector<const FitRow*> all;
  Values current;
  for (const auto& r : rows) all.push_back(&r);
  {
    std::vector<RowOutcome> now;
    for (const auto& r : rows) {
      RowOutcome o;
      o.id = r.id;
      o.error = (r.predict(r.current.gemm, r.current.attention) - r.measured) / r.measured;
      now.push_back(o);
    }
    std::vector<const RowOutcome*> p;
    for (const auto& o : now) p.push_back(&o);
    res.at_profiles = error_stats(p);
  }
  res.global = fit_pair(all);
  res.global.rows = 0;
  Values global;
  for (const auto& hw : profiles) global[hw] = res.global;
  res.in_sample_global = stats_at(all, global);
  res.global_values = global;
  res.per_hardware = fit_per_hardware(all, profiles);
  res.in_sample = stats_at(all, res.per_hardware);
  res.per_hardware_gemm = fit_per_hardware_gemm(all, profiles);
  res.in_sample_gemm = stats_at(all, res.per_hardware_gemm);
  res.per_hardware_scalar_gemm = fit_per_hardware_scalar(all, profiles, false);
  res.per_hardware_scalar_both = fit_per_hardware_scalar(all, profiles, true);
  res.in_sample_scalar_gemm = stats_at(all, res.per_hardware_scalar_gemm);
  res.in_sample_scalar_both = stats_at(all, res.per_hardware_scalar_both);
  std::map<std::string, std::vector<const FitRow*>> by_family;
  for (const auto& r : rows) by_family[r.family].push_back(&r);
  std::vector<RowOutcome> held, held_global, held_gemm, held_scalar_gemm, held_scalar_both;
  for (const auto& [fam, members] : by_family) {
    std::vector<const FitRow*> others;
    for (const auto& r : rows)
      if (r.family != fam) others.push_back(&r);
    if (others.empty()) continue;
    FamilyHoldout h;
    h.family = fam;
    h.fitted_without = fit_per_hardware(others, profiles);
    h.held_out = stats_at(members, h.fitted_without, &held);
    res.holdouts.push_back(h);
    Values g;
    HardwareFit pair = fit_pair(others);
    pair.rows = 0;
    for (const auto& hw : profiles) g[hw] = pair;
    stats_at(members, g, &held_global);
    stats_at(members, fit_per_hardware_gemm(others, profiles), &held_gemm);
    stats_at(members, fit_per_hardware_scalar(others, profiles, false), &held_scalar_gemm);
    stats_at(members, fit_per_hardware_scalar(others, profiles, true), &held_scalar_both);
  }
  auto stats_of = [](const std::vector<RowOutcome>& v) {
    std::vector<const RowOutcome*> p;
    for (const auto& o : v) p.push_back(&o);
    return error_stats(p);
  };
  res.leave_one_family_out = stats_of(held);
  res.leave_one_family_out_global = stats_of(held_global);
  res.leave_one_family_out_gemm = stats_of(held_gemm);
  res.leave_one_family_out_scalar_gemm = stats_of(held_scalar_gemm);
  res.leave_one_family_out_scalar_both = stats_of(held_scalar_both);
  return res;
}

const char* name(FitMode m) {
  switch (m) {
    case FitMode::global_pair: return "one global pair";
    case FitMode::per_profile_gemm: return "GEMM per profile, global attention";
    case FitMode::per_profile_pair: return "both per profile";
    case FitMode::scalar_gemm: return "one scalar per profile: GEMM";
    case FitMode::scalar_both: return "one scalar per profile: GEMM and attention";
  }
  return "?";
}

FitMode CalibrationResult::best_mode() const {
  return leave_one_family_out_scalar_both.mape < leave_one_family_out_scalar_gemm.mape ? FitMode::scalar_both
                                                                                       : FitMode::scalar_gemm;
}

const std::map<std::string, HardwareFit>& CalibrationResult::values(FitMode m) const {
  switch (m) {
    case FitMode::global_pair: return global_values;
    case FitMode::per_profile_gemm: return per_hardware_gemm;
    case FitMode::scalar_gemm: return per_hardware_scalar_gemm;
    case FitMode::scalar_both: return per_hardware_scalar_both;
    default: return per_hardware;
  }
}

std::string format_calibration_text(const CalibrationResult& r) {
  auto line = [](const ErrorStats& e) {
    return fmt::format("n={} MAPE {:.1f}%  median {:.1f}%  worst {:+.1f}% ({})", e.count, 100 * e.mape,
                       100 * e.median_abs, 100 * e.worst, e.worst_id);
  };
  auto values = [](const std::map<std::string, HardwareFit>& v) {
    std::string s;
    for (const auto& [hw, f] : v) s += fmt::format(" {}={:.2f}/{:.2f}{}", hw, f.gemm, f.attention, f.rows ? "" : "(global)");
    return s;
  };
  std::string o;
  o += fmt::format("gemm_sustained_fraction / attention_sustained_fraction: least squares on log(predicted/measured) "
                   "over {} headline rows\n", r.rows);
  o += fmt::format("  at the profiles' current values: {}\n", line(r.at_profiles));
  o += fmt::format("  one global pair {:.4f} / {:.4f}: {}\n", r.global.gemm, r.global.attention, line(r.in_sample_global));
  o += "  per profile (gemm / attention):\n";
  for (const auto& [hw, f] : r.per_hardware)
    o += fmt::format("    {:<22} {:.4f} / {:.4f}  ({} rows)\n", hw, f.gemm, f.attention, f.rows);
  o += fmt::format("  in sample, per profile:          {}\n", line(r.in_sample));
  o += "  leave one source family out (per-profile fit on the other families, predict this one):\n";
  for (const auto& h : r.holdouts)
    o += fmt::format("    {:<14} held out: {}\n      fitted without it:{}\n", h.family, line(h.held_out),
                     values(h.fitted_without));
  o += fmt::format("  leave-one-family-out overall:     {}\n", line(r.leave_one_family_out));
  o += fmt::format("  ... with one global pair:        {}\n", line(r.leave_one_family_out_global));
  o += "  GEMM per profile, global attention:\n";
  for (const auto& [hw, f] : r.per_hardware_gemm)
    o += fmt::format("    {:<22} {:.4f} / {:.4f}  ({} rows)\n", hw, f.gemm, f.attention, f.rows);
  o += fmt::format("  ... in sample:                   {}\n", line(r.in_sample_gemm));
  o += fmt::format("  ... leave one family out:        {}\n", line(r.leave_one_family_out_gemm));
  for (const bool both : {false, true}) {
    o += fmt::format("  {} (at most one fitted scalar per profile; own fit from {} rows):\n",
                     name(both ? FitMode::scalar_both : FitMode::scalar_gemm), kMinRowsForOwnFit);
    for (const auto& [hw, f] : both ? r.per_hardware_scalar_both : r.per_hardware_scalar_gemm)
      o += fmt::format("    {:<22} {:.4f}  ({})\n", hw, f.gemm, f.rows ? fmt::format("{} rows", f.rows) : "global");
    o += fmt::format("  ... in sample:                   {}\n",
                     line(both ? r.in_sample_scalar_both : r.in_sample_scalar_gemm));
    o += fmt::format("  ... leave one family out:        {}\n",
                     line(both ? r.leave_one_family_out_scalar_both : r.leave_one_family_out_scalar_gemm));
  }
  o += fmt::format("  lowest leave-one-family-out MAPE of the one-scalar modes: {} (what --write writes)\n",
                   name(r.best_mode()));
  o += "  (each row is simulated at (gemm, attention) = (1,1), (0.5,1), (1,0.5) and modelled as\n"
       "   seconds/token = G/gemm + A/attention + B; `clustersim calibrate --write` puts the per-profile\n"
       "   values into hardware/profiles/*.yaml)\n";
  return o;
}

std::vector<std::string> write_calibration(const CalibrationResult& r, const std::string& profiles_dir,
                                           const std::string& date, FitMode mode) {
  namespace fs = std::filesystem;
  std::vector<std::string> written;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(profiles_dir))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    const std::string profile = file.stem().string();
    const auto& values = r.values(mode);
    const auto it = values.find(profile);
    const bool scalar = mode == FitMode::scalar_gemm || mode == FitMode::scalar_both;
    const bool own = mode != FitMode::global_pair && it != values.end() && it->second.rows > 0;
    const HardwareFit& fit = own || (scalar && it != values.end()) ? it->second : r.global;
    const double lofo = mode == FitMode::global_pair        ? r.leave_one_family_out_global.mape
                        : mode == FitMode::per_profile_gemm ? r.leave_one_family_out_gemm.mape
                        : mode == FitMode::scalar_gemm      ? r.leave_one_family_out_scalar_gemm.mape
                        : mode == FitMode::scalar_both      ? r.leave_one_family_out_scalar_both.mape
                                                            : r.leave_one_family_out.mape;
    std::ifstream in(file);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    in.close();
    const std::string basis = own ? fmt::format("on this profile's {} headline rows ({})", fit.rows, name(mode))
                              : mode != FitMode::global_pair ? fmt::format("(global fit: fewer than {} headline rows on this profile)", kMinRowsForOwnFit)
                                                             : std::string("(global fit, one pair for every profile)");
    const std::string pad(32, ' ');
    for (const bool gemm : {true, false}) {
      const std::string key = gemm ? "gemm_sustained_fraction:" : "attention_sustained_fraction:";
      auto at = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(key, 0) == 0; });
      if (at == lines.end())
        throw scenarios::ScenarioError(fmt::format("{}: no top-level '{}' line to update", file.string(), key));
      auto end = at + 1;  // the comment block continues on indented lines that hold only a comment
      while (end != lines.end() && !end->empty() && (*end)[0] == ' ' && end->find_first_not_of(' ') != std::string::npos &&
             (*end)[end->find_first_not_of(' ')] == '#')
        ++end;
      const double value = gemm ? fit.gemm : fit.attention;
      std::vector<std::string> block = {fmt::format("{} {:.2f}  # FITTED by `clustersim calibrate --write` on {}: {:.4f} {}",
                                                    key, value, date, value, basis)};
      if (scalar && !gemm)
        block = {fmt::format("{} {:.2f}  # {}", key, value,
                             mode == FitMode::scalar_both ? "the same fitted scalar as gemm_sustained_fraction (one per profile)"
                                                          : "NOT fitted: attention from measured kernels (one scalar per profile)")};
      if (scalar && gemm) {
        block.push_back(pad + fmt::format("#   of tests/validation/published.csv ({}; leave-one-family-out MAPE {:.1f}%).",
                                          name(mode), 100 * lofo));
        block.push_back(pad + "#   The one fitted scalar of this profile: the share of the benchmarked kernel rate that");
        block.push_back(pad + "#   a training step sustains, beyond the modelled clocks, shapes and overheads.");
      } else if (gemm) {
        block.push_back(pad + fmt::format("#   of tests/validation/published.csv (global fit over all {} rows: {:.4f} / {:.4f};",
                                          r.rows, r.global.gemm, r.global.attention));
        block.push_back(pad + fmt::format("#   leave-one-family-out MAPE {:.1f}%). Multiplies the GEMM (MAMF) anchor rate;",
                                          100 * lofo));
        block.push_back(pad + "#   attention_sustained_fraction multiplies the FlashAttention curve. Reading: sustained");
        block.push_back(pad + "#   clocks under hours of full power vs the short anchor benchmarks, real shapes (causal");
        block.push_back(pad + "#   masks, head dims, training GEMMs) vs the benchmarks' best; they also absorb what the");
        block.push_back(pad + "#   simulator still lacks (framework/CPU overhead, unmodelled kernels): NOT measured ratios.");
      }
      at = lines.erase(at, end);
      lines.insert(at, block.begin(), block.end());
    }
    std::ofstream out(file);
    for (const auto& l : lines) out << l << '\n';
    written.push_back(file.string());
  }
  return written;
}

}  // namespace clustersim::tools
