#include "studies/error_band.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <map>
#include <sstream>

#include "models/model_spec.hpp"
#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "studies/calibrate.hpp"
#include "studies/conventions.hpp"
#include "studies/validation.hpp"

namespace clustersim::studies {

BandClass band_class(const scenarios::Scenario& s) {
  BandClass c;
  // Dense BF16 peak: V100/A100 ≈ 0.1–0.3 PFLOP/s, H100/H200/MI300X ≈ 1.0–1.3, B200/GB200/MI355X ≥ 2.2.
  const double bf16 = s.gpu.peak(hardware::Precision::bf16).si();
  c.hardware = bf16 < 0.5e15 ? "A100-class" : bf16 < 1.8e15 ? "H100-class" : "B200-class";
  const auto& p = s.parallel;
  c.style = s.model.is_moe() ? kMoeStyle  // banded only by MoE runs: their errors are not the dense ones
            : p.zero_stage == 3 && p.dp * p.cp > 1 ? "ZeRO-3/FSDP"
            : p.pp > 1                          ? "pipeline"
            : p.tp > 1                          ? "tensor parallel"
                                                : "data parallel";
  const double params = models::count_params(s.model, s.training.seq_len).total;
  c.scale = params < 15e9 ? "under 15B" : params <= 150e9 ? "15B-150B" : "over 150B";
  return c;
}

namespace {

// One line of the table: a class at one widening level ("*" = any) and its residual statistics,
// log(measured step time / predicted step time) over its rows.
struct BandRow {
  std::string hardware, style, scale;
  int rows = 0;
  int families = 0;            ///< source families among the rows
  double mean = 0;             ///< mean of the families' mean log ratios
  double between = 0;          ///< sd of the families' means (0 with one family)
  double within = 0;           ///< pooled sd of rows about their family's mean
};

// Level 0 is the narrowest class; each level replaces one more key by "*" (an MoE class keeps its
// style: its widest class is every MoE run, never the dense ones).
std::array<std::string, 3> keys_at(const BandClass& c, int level) {
  const bool moe = c.style == kMoeStyle;
  return {level < (moe ? 2 : 3) ? c.hardware : "*", moe || level < 2 ? c.style : "*", level < 1 ? c.scale : "*"};
}

std::vector<BandRow> parse_table(const std::string& text) {
  std::istringstream in(text);
  std::string csv;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') csv += line + "\n";
  const CsvTable t = parse_csv(csv, "studies/error_bands.csv");
  std::vector<BandRow> out;
  for (const auto& r : t.rows)
    out.push_back({r.at("hardware_class"), r.at("parallelism"), r.at("model_scale"), std::stoi(r.at("rows")),
                   std::stoi(r.at("families")), std::stod(r.at("mean_log_ratio")), std::stod(r.at("sd_between_families")),
                   std::stod(r.at("sd_within_family"))});
  return out;
}

const std::vector<BandRow>& table() {
  static const std::vector<BandRow> rows = parse_table(error_bands_csv_text());
  return rows;
}

// The standard normal quantile, by bisection on erfc (called once per band; exact to 1e-12).
double normal_quantile(double p) {
  double lo = -10, hi = 10;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// Student's t quantile with `nu` degrees of freedom from the normal one (Cornish-Fisher expansion,
// Abramowitz & Stegun 26.7.5; within 1 % for nu >= 7): few rows widen the band.
double t_quantile(double p, int nu) {
  const double z = normal_quantile(p), n = nu;
  return z + (z * z * z + z) / (4 * n) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * n * n) +
         (3 * std::pow(z, 7) + 19 * std::pow(z, 5) + 17 * z * z * z - 15 * z) / (384 * n * n * n);
}

std::string describe(const BandRow& r) {
  std::string s;
  for (const std::string* k : {&r.hardware, &r.style, &r.scale})
    if (*k != "*") s += (s.empty() ? "" : ", ") + *k;
  return s.empty() ? "all published runs" : s;
}

}  // namespace

namespace {

// The band for class `c` from `rows` (the committed table, or one built without a family).
ErrorBand band_from(const std::vector<BandRow>& rows, const BandClass& c, double confidence) {
  const BandRow* found = nullptr;
  int narrow_rows = 0;  // rows of the narrowest class, whether or not enough
  const BandRow* widest = nullptr;
  for (int level = 0; level <= 3 && !found; ++level) {
    const auto k = keys_at(c, level);
    for (const auto& r : rows) {
      if (r.hardware != k[0] || r.style != k[1] || r.scale != k[2]) continue;
      if (level == 0) narrow_rows = r.rows;
      widest = &r;
      if (r.rows >= kMinBandRows && r.families >= kMinBandFamilies) found = &r;
    }
  }
  // MoE runs come from fewer sources than kMinBandFamilies: their widest class, said so below.
  if (!found && c.style == kMoeStyle) found = widest;
  if (!found) throw scenarios::ScenarioError("studies/error_bands.csv: no class holds enough rows for an error band");
  // A prediction interval for a run of a new source (random effects: rows of one family share an
  // error): mean ± t(n-1)·sqrt(between²·(1 + 1/F) + within²), F families, n rows. (t with F-1 degrees
  // of freedom covered 94 % at 90 % but 89 % at 68 %, see the table header for this choice's figures.)
  const double f = found->families;
  const double half = t_quantile(0.5 + confidence / 2, found->rows - 1) *
                      std::sqrt(found->between * found->between * (1 + 1 / f) + found->within * found->within);
  ErrorBand b;
  b.low = std::exp(found->mean - half);
  b.high = std::exp(found->mean + half);
  b.rows = found->rows;
  b.basis = describe(*found);
  if (found->families < kMinBandFamilies)
    b.basis += fmt::format("; only {} source families: a thin basis", found->families);
  if (found->scale == "*")  // widened: say how thin the exact class is (poorly validated territory)
    b.basis += fmt::format("; widened: only {} published rows are {}, {}, {}", narrow_rows, c.hardware, c.style, c.scale);
  b.confidence = confidence;
  return b;
}

// One published row's out-of-sample residual and class.
struct Residual {
  std::string family;
  BandClass c;
  double log_ratio = 0;  ///< log(measured step / predicted step) = log(1 + tokens/s error)
};

std::vector<Residual> residuals(const CsvTable& published, const std::vector<RowOutcome>& held) {
  std::map<std::string, const RowOutcome*> by_id;
  for (const auto& o : held) by_id[o.id] = &o;
  std::vector<Residual> out;
  for (const auto& row : published.rows) {
    const auto it = by_id.find(row.at("id"));
    if (it == by_id.end()) continue;
    const scenarios::Scenario sc = scenarios::load_scenario_string(row_scenario(row).yaml, "published.csv:" + it->first);
    out.push_back({it->second->family, band_class(sc), std::log1p(it->second->error)});
  }
  // The MoE runs' headline rows: nothing is fitted on them, so their errors are out of sample as they are.
  const CsvTable moe = parse_csv(published_moe_csv_text(), "tests/validation/published_moe.csv");
  std::map<std::string, const std::map<std::string, std::string>*> moe_rows;
  for (const auto& row : moe.rows) moe_rows[row.at("id")] = &row;
  for (const auto& o : validate_table(moe).rows) {
    if (!o.headline()) continue;
    const scenarios::Scenario sc = scenarios::load_scenario_string(row_scenario(*moe_rows.at(o.id)).yaml,
                                                                   "published_moe.csv:" + o.id);
    out.push_back({o.family, band_class(sc), std::log1p(o.error)});
  }
  return out;
}

std::vector<BandRow> group(const std::vector<Residual>& res, const std::string& without_family = "") {
  using Key = std::array<std::string, 3>;
  std::map<Key, std::map<std::string, std::vector<double>>> groups;  // class → family → log ratios
  for (const auto& r : res)
    if (r.family != without_family)
      for (int level = 0; level <= 3; ++level)
        if (level == 0 || keys_at(r.c, level) != keys_at(r.c, level - 1))  // an MoE class repeats a level
          groups[keys_at(r.c, level)][r.family].push_back(r.log_ratio);
  std::vector<BandRow> out;
  for (const auto& [k, fams] : groups) {
    BandRow b{k[0], k[1], k[2], 0, int(fams.size())};
    std::vector<double> means;
    double ss_within = 0;
    for (const auto& [fam, v] : fams) {
      double m = 0;
      for (double x : v) m += x;
      m /= double(v.size());
      means.push_back(m);
      for (double x : v) ss_within += (x - m) * (x - m);
      b.rows += int(v.size());
    }
    for (double m : means) b.mean += m;
    b.mean /= double(means.size());
    double ss_between = 0;
    for (double m : means) ss_between += (m - b.mean) * (m - b.mean);
    b.between = means.size() > 1 ? std::sqrt(ss_between / double(means.size() - 1)) : 0;
    b.within = b.rows > b.families ? std::sqrt(ss_within / double(b.rows - b.families)) : 0;
    out.push_back(b);
  }
  return out;
}

// The share of rows inside the band built without their family (the band's own out-of-sample check).
double coverage(const std::vector<Residual>& res, double confidence) {
  std::map<std::string, std::vector<BandRow>> without;
  int inside = 0;
  for (const auto& r : res) {
    auto it = without.find(r.family);
    if (it == without.end()) it = without.emplace(r.family, group(res, r.family)).first;
    const ErrorBand b = band_from(it->second, r.c, confidence);
    inside += r.log_ratio >= std::log(b.low) && r.log_ratio <= std::log(b.high);
  }
  return res.empty() ? 0 : double(inside) / double(res.size());
}

}  // namespace

ErrorBand error_band(const scenarios::Scenario& s, double confidence) {
  if (!(confidence > 0 && confidence < 1))
    throw scenarios::ScenarioError(fmt::format("confidence {}: expected a fraction between 0 and 1, e.g. 0.9", confidence));
  return band_from(table(), band_class(s), confidence);
}

std::string error_bands_csv(const CsvTable& published) { return error_bands_csv(published, held_out_rows(published)); }

std::string error_bands_csv(const CsvTable& published, const std::vector<RowOutcome>& held_out) {
  const std::vector<Residual> res = residuals(published, held_out);
  std::string o =
      "# Generated by `clustersim calibrate --write-error-bands studies/error_bands.csv`; do not edit by hand\n"
      "# (tests/validation/published_runs_test.cpp regenerates and compares it). Each headline row of\n"
      "# tests/validation/published.csv is predicted with the profile constants fitted without its source\n"
      "# family (leave one family out); ratio = measured step time / predicted step time. Rows are grouped\n"
      "# by hardware class, parallelism style and model scale (studies/error_band.cpp band_class), and by\n"
      "# broader classes (* = any). Per class, of log(ratio): the mean of the source families' means, the sd\n"
      "# of those means (between families) and the pooled sd of rows about their family's mean (within).\n";
  o += fmt::format("# Check of the bands themselves: with the bands rebuilt without each row's family, {:.0f} % of the\n"
                   "# {} rows fall inside their 68 % band and {:.0f} % inside their 90 % band.\n",
                   100 * coverage(res, 0.68), res.size(), 100 * coverage(res, 0.9));
  o += "hardware_class,parallelism,model_scale,rows,families,mean_log_ratio,sd_between_families,sd_within_family\n";
  for (const auto& r : group(res))
    o += fmt::format("{},{},{},{},{},{:.5f},{:.5f},{:.5f}\n", r.hardware, r.style, r.scale, r.rows, r.families, r.mean,
                     r.between, r.within);
  return o;
}

}  // namespace clustersim::studies
