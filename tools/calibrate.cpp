#include "tools/calibrate.hpp"

#include <Eigen/Dense>
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace clustersim::tools {
namespace {

struct FitRow {
  std::string id, family;
  scenarios::Scenario scenario;
  double measured = 0;
  // Seconds per token per GPU as a function of the fraction f: a/f + b. Tensor Core work scales
  // as 1/f; memory-bound kernels, latencies and exposed communication do not. Fitted by linear
  // least squares (Eigen) on simulations at a few values of f.
  double a = 0, b = 0;
  double predict(double f) const { return 1.0 / (a / f + b); }
};

constexpr double kGrid[] = {0.5, 0.7, 1.0};

void fit_row_model(FitRow& r) {
  Eigen::Matrix<double, 3, 2> x;
  Eigen::Vector3d y;
  for (int i = 0; i < 3; ++i) {
    r.scenario.gpu.tensor_sustained_fraction = kGrid[i];
    x(i, 0) = 1.0 / kGrid[i];
    x(i, 1) = 1.0;
    y(i) = 1.0 / scenarios::simulate(r.scenario).tokens_per_s_per_gpu;
  }
  const Eigen::Vector2d ab = x.colPivHouseholderQr().solve(y);
  r.a = ab(0), r.b = ab(1);
}

ErrorStats stats_at(const std::vector<const FitRow*>& rows, double f, std::vector<RowOutcome>* keep = nullptr) {
  std::vector<RowOutcome> out;
  for (const FitRow* r : rows) {
    RowOutcome o;
    o.id = r->id;
    o.simulated = true;
    o.error = (r->predict(f) - r->measured) / r->measured;
    out.push_back(o);
  }
  std::vector<const RowOutcome*> ptrs;
  for (const auto& o : out) ptrs.push_back(&o);
  ErrorStats s = error_stats(ptrs);
  if (keep) keep->insert(keep->end(), out.begin(), out.end());
  return s;
}

double fit(const std::vector<const FitRow*>& rows) {
  auto loss = [&](double f) {
    double sum = 0;
    for (const FitRow* r : rows) {
      const double e = std::log(r->predict(f) / r->measured);
      sum += e * e;
    }
    return sum;
  };
  // Golden-section search on [0.3, 1]: the loss is unimodal in a single rate multiplier.
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = 0.3, b = 1.0, c = b - g * (b - a), d = a + g * (b - a);
  double fc = loss(c), fd = loss(d);
  while (b - a > 1e-5) {
    if (fc < fd) b = d, d = c, fd = fc, c = b - g * (b - a), fc = loss(c);
    else a = c, c = d, fc = fd, d = a + g * (b - a), fd = loss(d);
  }
  return 0.5 * (a + b);
}

}  // namespace

CalibrationResult calibrate(const CsvTable& table, const std::string& id_prefix) {
  std::vector<FitRow> rows;
  std::vector<double> current;
  for (const auto& row : table.rows) {
    const auto id_it = row.find("id");
    const std::string id = id_it == row.end() ? "" : id_it->second;
    if (!id_prefix.empty() && id.rfind(id_prefix, 0) != 0) continue;
    const RowScenario rs = row_scenario(row);
    if (!rs.reason.empty() || !rs.flags.empty()) continue;
    try {
      FitRow fr{id, family_of(id), scenarios::load_scenario_string(rs.yaml, "published.csv:" + id),
                std::stod(row.at("measured_tps_gpu"))};
      current.push_back(fr.scenario.gpu.tensor_sustained_fraction);
      rows.push_back(std::move(fr));
    } catch (const scenarios::ScenarioError&) {
      // Not simulated yet: validate lists it with its reason.
    }
  }
  CalibrationResult res;
  res.rows = int(rows.size());
  if (rows.empty()) throw scenarios::ScenarioError("calibrate: no simulated, unflagged rows to fit");
  std::vector<const FitRow*> all;
  std::vector<RowOutcome> now;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    fit_row_model(rows[i]);
    all.push_back(&rows[i]);
    RowOutcome o;
    o.id = rows[i].id;
    o.error = (rows[i].predict(current[i]) - rows[i].measured) / rows[i].measured;
    now.push_back(o);
  }
  std::vector<const RowOutcome*> now_ptrs;
  for (const auto& o : now) now_ptrs.push_back(&o);
  res.at_profiles = error_stats(now_ptrs);
  res.value = fit(all);
  res.in_sample = stats_at(all, res.value);
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
    h.fitted_without = fit(others);
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
  std::string o;
  o += fmt::format("{} fitted on {} headline rows (least squares on log(predicted/measured)): {:.4f}\n", r.parameter,
                   r.rows, r.value);
  o += fmt::format("  at the profiles' current values: {}\n", line(r.at_profiles));
  o += fmt::format("  in sample at the fit:            {}\n", line(r.in_sample));
  o += "  leave one source family out (fit on the others, predict it):\n";
  for (const auto& h : r.holdouts)
    o += fmt::format("    {:<14} fit without it {:.4f}  held out: {}\n", h.family, h.fitted_without, line(h.held_out));
  o += fmt::format("  leave-one-family-out overall:     {}\n", line(r.leave_one_family_out));
  o += "  (each row's tokens/s at f comes from simulations at f = 0.5, 0.7, 1 fitted as 1/(a/f + b);\n"
       "   write the value into hardware/profiles/*.yaml as tensor_sustained_fraction to apply it)\n";
  return o;
}

}  // namespace clustersim::tools
