#include "tools/calibrate.hpp"

#include <Eigen/Dense>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace clustersim::tools {
namespace {

struct FitRow {
  std::string id, family, hardware;
  double measured = 0;
  double current = 1;  ///< the profile's value when loaded
  // Seconds per token per GPU as a function of the fraction f: a/f + b. Tensor Core work scales
  // as 1/f; memory-bound kernels, latencies and exposed communication do not.
  double a = 0, b = 0;
  double predict(double f) const { return 1.0 / (a / f + b); }
};

constexpr double kGrid[] = {0.5, 0.7, 1.0};

void fit_row_model(FitRow& r, scenarios::Scenario sc) {
  Eigen::Matrix<double, 3, 2> x;
  Eigen::Vector3d y;
  for (int i = 0; i < 3; ++i) {
    sc.gpu.tensor_sustained_fraction = kGrid[i];
    x(i, 0) = 1.0 / kGrid[i];
    x(i, 1) = 1.0;
    y(i) = 1.0 / scenarios::simulate(sc).tokens_per_s_per_gpu;
  }
  const Eigen::Vector2d ab = x.colPivHouseholderQr().solve(y);
  r.a = ab(0), r.b = ab(1);
}

using Values = std::map<std::string, HardwareFit>;

ErrorStats stats_at(const std::vector<const FitRow*>& rows, const Values& v, std::vector<RowOutcome>* keep = nullptr) {
  std::vector<RowOutcome> out;
  for (const FitRow* r : rows) {
    RowOutcome o;
    o.id = r->id;
    o.simulated = true;
    o.error = (r->predict(v.at(r->hardware).value) - r->measured) / r->measured;
    out.push_back(o);
  }
  std::vector<const RowOutcome*> ptrs;
  for (const auto& o : out) ptrs.push_back(&o);
  ErrorStats s = error_stats(ptrs);
  if (keep) keep->insert(keep->end(), out.begin(), out.end());
  return s;
}

// One value for `rows` by golden-section search on [0.3, 1] (the loss is unimodal in one rate).
double fit_one(const std::vector<const FitRow*>& rows) {
  auto loss = [&](double f) {
    double sum = 0;
    for (const FitRow* r : rows) {
      const double e = std::log(r->predict(f) / r->measured);
      sum += e * e;
    }
    return sum;
  };
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = 0.3, b = 1.0, c = b - g * (b - a), d = a + g * (b - a);
  double fc = loss(c), fd = loss(d);
  while (b - a > 1e-5) {
    if (fc < fd) b = d, d = c, fd = fc, c = b - g * (b - a), fc = loss(c);
    else a = c, c = d, fc = fd, d = a + g * (b - a), fd = loss(d);
  }
  return 0.5 * (a + b);
}

// Per profile where it has rows, the global value elsewhere; `profiles` lists every profile
// that needs a value.
Values fit_per_hardware(const std::vector<const FitRow*>& rows, const std::set<std::string>& profiles) {
  const double global = fit_one(rows);
  Values v;
  for (const auto& hw : profiles) {
    std::vector<const FitRow*> mine;
    for (const FitRow* r : rows)
      if (r->hardware == hw) mine.push_back(r);
    v[hw] = mine.empty() ? HardwareFit{global, 0} : HardwareFit{fit_one(mine), int(mine.size())};
  }
  return v;
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
      fr.current = sc.gpu.tensor_sustained_fraction;
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
  for (const auto& r : rows) all.push_back(&r);
  {
    std::vector<RowOutcome> now;
    for (const auto& r : rows) {
      RowOutcome o;
      o.id = r.id;
      o.error = (r.predict(r.current) - r.measured) / r.measured;
      now.push_back(o);
    }
    std::vector<const RowOutcome*> p;
    for (const auto& o : now) p.push_back(&o);
    res.at_profiles = error_stats(p);
  }
  res.global_value = fit_one(all);
  Values global;
  for (const auto& hw : profiles) global[hw] = {res.global_value, 0};
  res.in_sample_global = stats_at(all, global);
  res.per_hardware = fit_per_hardware(all, profiles);
  res.in_sample = stats_at(all, res.per_hardware);
  std::map<std::string, std::vector<const FitRow*>> by_family;
  for (const auto& r : rows) by_family[r.family].push_back(&r);
  std::vector<RowOutcome> held;
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
  }
  std::vector<const RowOutcome*> p;
  for (const auto& o : held) p.push_back(&o);
  res.leave_one_family_out = error_stats(p);
  return res;
}

std::string format_calibration_text(const CalibrationResult& r) {
  auto line = [](const ErrorStats& e) {
    return fmt::format("n={} MAPE {:.1f}%  median {:.1f}%  worst {:+.1f}% ({})", e.count, 100 * e.mape,
                       100 * e.median_abs, 100 * e.worst, e.worst_id);
  };
  auto values = [](const std::map<std::string, HardwareFit>& v) {
    std::string s;
    for (const auto& [hw, f] : v) s += fmt::format(" {}={:.3f}{}", hw, f.value, f.rows ? "" : "(global)");
    return s;
  };
  std::string o;
  o += fmt::format("{}: least squares on log(predicted/measured) over {} headline rows\n", r.parameter, r.rows);
  o += fmt::format("  at the profiles' current values: {}\n", line(r.at_profiles));
  o += fmt::format("  one global value {:.4f}:         {}\n", r.global_value, line(r.in_sample_global));
  o += "  per profile:\n";
  for (const auto& [hw, f] : r.per_hardware)
    o += fmt::format("    {:<22} {:.4f}  ({} rows)\n", hw, f.value, f.rows);
  o += fmt::format("  in sample, per profile:          {}\n", line(r.in_sample));
  o += "  leave one source family out (per-profile fit on the other families, predict this one):\n";
  for (const auto& h : r.holdouts)
    o += fmt::format("    {:<14} held out: {}\n      fitted without it:{}\n", h.family, line(h.held_out),
                     values(h.fitted_without));
  o += fmt::format("  leave-one-family-out overall:     {}\n", line(r.leave_one_family_out));
  o += "  (each row's tokens/s at f comes from simulations at f = 0.5, 0.7, 1 fitted as 1/(a/f + b);\n"
       "   `clustersim calibrate --write` puts the per-profile values into hardware/profiles/*.yaml)\n";
  return o;
}

std::vector<std::string> write_calibration(const CalibrationResult& r, const std::string& profiles_dir,
                                           const std::string& date) {
  namespace fs = std::filesystem;
  std::vector<std::string> written;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(profiles_dir))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    const std::string profile = file.stem().string();
    const auto it = r.per_hardware.find(profile);
    const bool own = it != r.per_hardware.end() && it->second.rows > 0;
    const double value = own ? it->second.value : r.global_value;
    std::ifstream in(file);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    in.close();
    const std::string key = r.parameter + ":";
    auto at = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(key, 0) == 0; });
    if (at == lines.end())
      throw scenarios::ScenarioError(fmt::format("{}: no top-level '{}' line to update", file.string(), r.parameter));
    auto end = at + 1;  // the comment block continues on indented lines that hold only a comment
    while (end != lines.end() && end->find_first_not_of(' ') != std::string::npos && (*end)[0] == ' ' &&
           (*end)[end->find_first_not_of(' ')] == '#')
      ++end;
    const std::string pad(32, ' ');
    std::vector<std::string> block = {
        fmt::format("{} {:.2f}  # FITTED by `clustersim calibrate --write` on {}: {:.4f} {}", key, value, date, value,
                    own ? fmt::format("on this profile's {} headline rows", it->second.rows)
                        : "(global fit: no headline rows on this profile)"),
        pad + fmt::format("#   of tests/validation/published.csv (global fit over all {} rows: {:.4f}; leave-one-",
                          r.rows, r.global_value),
        pad + fmt::format("#   family-out MAPE {:.1f}%). Multiplies the GEMM (MAMF) and attention (FA) anchor",
                          100 * r.leave_one_family_out.mape),
        pad + "#   rates. Reading: sustained clocks under hours of full power vs the short anchor",
        pad + "#   benchmarks, and real shapes vs a sweep's best; it also absorbs what the simulator",
        pad + "#   still lacks (framework/CPU overhead, unmodelled kernels): NOT a measured clock ratio."};
    at = lines.erase(at, end);
    lines.insert(at, block.begin(), block.end());
    std::ofstream out(file);
    for (const auto& l : lines) out << l << '\n';
    written.push_back(file.string());
  }
  return written;
}

}  // namespace clustersim::tools
