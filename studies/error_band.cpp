#include "studies/error_band.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include "models/model_spec.hpp"
#include "scenarios/error.hpp"
#include "studies/csv_table.hpp"

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

std::array<std::string, 3> keys_at(const BandClass& c, int level) {
  const bool moe = c.style == kMoeStyle;
  return {level < (moe ? 2 : 3) ? c.hardware : "*", moe || level < 2 ? c.style : "*", level < 1 ? c.scale : "*"};
}

namespace {

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

ErrorBand error_band(const scenarios::Scenario& s, double confidence) {
  if (!(confidence > 0 && confidence < 1))
    throw scenarios::ScenarioError(fmt::format("confidence {}: expected a fraction between 0 and 1, e.g. 0.9", confidence));
  // A sweep or a plan asks for one class's band again and again: the last one is kept per thread.
  thread_local std::optional<std::tuple<BandClass, double, ErrorBand>> last;
  BandClass c = band_class(s);
  if (!last || std::get<0>(*last) != c || std::get<1>(*last) != confidence) {
    ErrorBand b = band_from(table(), c, confidence);
    last.emplace(std::move(c), confidence, std::move(b));
  }
  return std::get<2>(*last);
}

}  // namespace clustersim::studies
