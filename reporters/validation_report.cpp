#include "reporters/validation_report.hpp"

#include "reporters/svg.hpp"
#include "studies/counted.hpp"
#include "studies/json_value.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace clustersim::reporters {

using namespace studies;  // the library this front end prints
namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string pct(double x) { return fmt::format("{:+.1f}%", 100 * x); }

std::string stats_line(const ErrorStats& e) {
  if (e.count == 0) return "n=0";
  return fmt::format("n={:<3} MAPE {:5.1f}%  median {:5.1f}%  worst {} ({})", e.count, 100 * e.mape,
                     100 * e.median_abs, pct(e.worst), e.worst_id);
}

// Statistics at six significant digits (what the validation's tables quote).
Json six(double v) { return json_number_value(v, 6); }

Json json_stats(const ErrorStats& e) {
  return {{"count", e.count},
          {"mape", six(e.mape)},
          {"median_abs_error", six(e.median_abs)},
          {"worst_error", six(e.worst)},
          {"worst_id", e.worst_id}};
}

// The headline statistics with the out-of-sample figures: lofo_mape is the MAPE of the same
// rows predicted with constants refitted without the family (null when not computed).
Json json_headline(const FamilySummary& f) {
  Json o = json_stats(f.headline);
  o["lofo_mape"] = f.held_out ? six(f.held_out->mape) : Json(nullptr);
  o["lofo_count"] = f.held_out ? f.held_out->count : 0;
  return o;
}

Json json_family(const FamilySummary& f) {
  return {{"family", f.family},
          {"rows", f.rows},
          {"simulated", f.simulated},
          {"headline", json_headline(f)},
          {"flagged", json_stats(f.flagged)}};
}

// A group's statistics carry their bias; the family objects keep their existing fields.
Json json_group_stats(const ErrorStats& e) {
  Json o = json_stats(e);
  o["bias"] = six(e.bias);
  return o;
}

Json json_group(const GroupSummary& g) {
  return {{"value", g.value},
          {"in_sample", json_group_stats(g.in_sample)},
          {"held_out", g.held_out ? json_group_stats(*g.held_out) : Json(nullptr)}};
}

// The first out-of-sample figure: the held-out split by source and date, never fitted on.
std::string holdout_split_line(const ValidationSummary& s) {
  if (!s.holdout_split) return "\nHeld-out split: none of these rows\n";
  const ErrorStats& e = *s.holdout_split;
  return fmt::format("\nHeld-out split ({}; never fitted on): {}  bias {}\n", s.holdout_rule, stats_line(e), pct(e.bias));
}

// Republished configurations: how much of the error the release explains (release_spread.hpp).
std::string release_spread_text(const ValidationSummary& s) {
  if (!s.release_spread) return "";
  const ReleaseSpread& r = *s.release_spread;
  return fmt::format(
      "\nSame job and layout, another release: {} configurations (model, GPUs, precision, sequence, batch and "
      "tp/pp/ep/cp/vpp/micro-batch) were published by two or more releases ({} simulated rows, superseded ones "
      "included).\n  Their fastest release is a median {:.2f}x their slowest ({} of {} over 1.2x; "
      "widest {:.2f}x: {}).\n  Each row taken as its configuration's geometric mean over the releases misses by {:.1f}% "
      "MAPE (a description of the data, not a predictor): the error that knowing the job and its layout but not the release's software leaves. The simulator: {:.1f}% on the same "
      "rows.\n",
      r.configurations, r.rows, r.median_ratio, r.over_20_percent, r.configurations, r.widest_ratio,
      r.widest_configuration, 100 * r.release_blind_mape, 100 * r.simulator_mape);
}

Json release_spread_json(const ValidationSummary& s) {
  if (!s.release_spread) return nullptr;
  const ReleaseSpread& r = *s.release_spread;
  return {{"configurations", r.configurations},
          {"rows", r.rows},
          {"median_ratio", six(r.median_ratio)},
          {"over_20_percent", r.over_20_percent},
          {"widest_ratio", six(r.widest_ratio)},
          {"widest_configuration", r.widest_configuration},
          {"release_blind_mape", six(r.release_blind_mape)},
          {"simulator_mape", six(r.simulator_mape)}};
}

// The same job on two GPU types: the simulator's ratio against the measured one (hardware_pairs.hpp).
std::string hardware_pairs_text(const ValidationSummary& s) {
  if (!s.hardware_pairs) return "";
  const HardwarePairs& h = *s.hardware_pairs;
  std::string o = fmt::format(
      "\nSame job on two GPU types (one release, model, GPU count, precision, sequence, batch and layout; only the GPU "
      "differs): {}, ratio MAPE {:.1f}%\n  ratio error = predicted ratio / measured ratio - 1 (+: the simulator "
      "favours the first GPU more than measured); no constant is fitted on these ratios\n",
      counted(static_cast<long long>(h.pairs.size()), "pair"), 100 * h.mape);
  for (const HardwarePairClass& c : h.classes)
    o += fmt::format("  {:<14} {:>9}  mean {:>7}  MAPE {:5.1f}%\n", c.gpus, counted(c.count, "pair"), pct(c.mean_error),
                     100 * c.mape);
  for (const HardwarePair& p : h.pairs)
    o += fmt::format("    {:<16} {:<16} {:<13} measured {:.3f}  predicted {:.3f}  {:>7}  {}\n", p.a_id, p.b_id,
                     p.a_gpu + "/" + p.b_gpu, p.measured_ratio, p.predicted_ratio, pct(p.error()), p.job);
  return o;
}

Json hardware_pairs_json(const ValidationSummary& s) {
  if (!s.hardware_pairs) return nullptr;
  const HardwarePairs& h = *s.hardware_pairs;
  Json classes = Json::array(), pairs = Json::array();
  for (const HardwarePairClass& c : h.classes)
    classes.push_back({{"gpus", c.gpus}, {"count", c.count}, {"mean_error", six(c.mean_error)}, {"mape", six(c.mape)}});
  for (const HardwarePair& p : h.pairs)
    pairs.push_back({{"a_id", p.a_id},
                     {"b_id", p.b_id},
                     {"gpus", p.a_gpu + "/" + p.b_gpu},
                     {"job", p.job},
                     {"measured_ratio", six(p.measured_ratio)},
                     {"predicted_ratio", six(p.predicted_ratio)},
                     {"error", six(p.error())}});
  return {{"mape", six(h.mape)}, {"classes", classes}, {"pairs", pairs}};
}
}  // namespace

std::string format_validation_text(const ValidationSummary& s) {
  std::string o;
  o += "Predicted vs measured tokens/s per GPU (error = (predicted - measured) / measured)\n\n";
  o += fmt::format("{:<18} {:<34} {:<16} {:<26} {:>10} {:>10} {:>8}  {}\n", "id", "model", "gpu", "layout",
                   "measured", "predicted", "error", "notes");
  for (const auto& r : s.rows) {
    std::vector<std::string> notes;
    if (r.holdout) notes.push_back("held-out split");
    if (!r.simulated) notes.push_back("NOT SIMULATED: " + r.reason);
    for (const auto& f : r.flags) notes.push_back("excluded: " + f);
    if (r.simulated && !r.fits_memory) notes.push_back("our memory model says it does not fit");
    const std::string model = r.model_name.size() > 34 ? r.model_name.substr(0, 33) + "~" : r.model_name;
    const std::string gpu = r.gpu_type.size() > 16 ? r.gpu_type.substr(0, 15) + "~" : r.gpu_type;
    o += fmt::format("{:<18} {:<34} {:<16} {:<26} {:>10.1f} {:>10} {:>8}  {}\n", r.id, model, gpu, r.layout,
                     r.measured_tps_gpu, r.simulated ? fmt::format("{:.1f}", r.predicted_tps_gpu) : "-",
                     r.simulated ? pct(r.error) : "-", join(notes, "; "));
  }
  o += holdout_split_line(s);
  o += "\nPer source family (headline: simulated rows without quality flags)\n";
  auto fam_line = [&](const FamilySummary& f) {
    std::string line = fmt::format("  {:<14} rows {:>3}  simulated {:>3}  headline {}", f.family, f.rows, f.simulated,
                                   stats_line(f.headline));
    if (f.held_out) line += fmt::format("  | out of sample MAPE {:5.1f}%", 100 * f.held_out->mape);
    if (f.flagged.count) line += fmt::format("  | flagged {}", stats_line(f.flagged));
    return line + "\n";
  };
  for (const auto& f : s.families) o += fam_line(f);
  o += fam_line(s.overall);
  o += holdout_split_line(s);
  if (s.overall.held_out)
    o += fmt::format("Headline MAPE out of sample (each family predicted with the fitted constants refitted without "
                     "it, {}): {:.1f}% over {} rows; in sample: {:.1f}%\n",
                     s.held_out_mode, 100 * s.overall.held_out->mape, s.overall.held_out->count,
                     100 * s.overall.headline.mape);
  o += release_spread_text(s);
  o += hardware_pairs_text(s);
  std::map<std::string, int> reasons;
  for (const auto& r : s.rows)
    if (!r.simulated) ++reasons[r.reason];
  if (!reasons.empty()) {
    o += "\nNot simulated, by reason\n";
    std::vector<std::pair<int, std::string>> sorted;
    for (const auto& [why, n] : reasons) sorted.emplace_back(-n, why);
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [n, why] : sorted) o += fmt::format("  {:>4}  {}\n", -n, why);
  }
  return o;
}

std::string format_validation_json(const ValidationSummary& s, const ResidualGroups* groups) {
  Json rows = Json::array(), families = Json::array();
  for (const auto& r : s.rows) {
    Json row = {
        {"id", r.id}, {"family", r.family}, {"measured_tps_gpu", six(r.measured_tps_gpu)}, {"simulated", r.simulated}};
    if (r.simulated) {
      row["predicted_tps_gpu"] = six(r.predicted_tps_gpu);
      row["error"] = six(r.error);
      row["predicted_mfu"] = six(r.predicted_mfu);
      row["fits_memory"] = r.fits_memory;
    } else {
      row["reason"] = r.reason;
    }
    row["headline"] = r.headline();
    row["holdout"] = r.holdout;
    row["flags"] = r.flags;
    row["assumptions"] = r.assumptions;
    rows.push_back(std::move(row));
  }
  for (const auto& f : s.families) families.push_back(json_family(f));
  Json o = {{"holdout_split", s.holdout_split
                                  ? Json{{"rule", s.holdout_rule}, {"headline", json_group_stats(*s.holdout_split)}}
                                  : Json(nullptr)},
            {"rows", rows},
            {"families", families},
            {"overall", json_family(s.overall)},
            {"release_spread", release_spread_json(s)},
            {"hardware_pairs", hardware_pairs_json(s)}};
  if (groups) {
    Json values = Json::array();
    for (const auto& g : groups->groups) values.push_back(json_group(g));
    o["groups"] = {{"column", groups->column}, {"values", values}};
  }
  return json_dump(o) + "\n";
}

std::string format_groups_text(const ResidualGroups& g) {
  std::string o = fmt::format("\nBy {} (headline rows; bias = mean signed error, + = predicted faster than measured)\n",
                              g.column);
  o += fmt::format("  {:<24} {:>4} {:>7} {:>6} {:>7}  {:<28}| out of sample: {:>7} {:>6}\n", "value", "n", "bias", "MAPE",
                   "median", "worst", "bias", "MAPE");
  for (const auto& v : g.groups) {
    const ErrorStats& e = v.in_sample;
    const std::string value = v.value.size() > 24 ? v.value.substr(0, 23) + "~" : v.value;
    const std::string worst = fmt::format("{} ({})", pct(e.worst), e.worst_id);
    o += fmt::format("  {:<24} {:>4} {:>7} {:>5.1f}% {:>6.1f}%  {:<28}| {:>21} {:>6}\n", value, e.count,
                     pct(e.bias), 100 * e.mape, 100 * e.median_abs, worst, v.held_out ? pct(v.held_out->bias) : "-",
                     v.held_out ? fmt::format("{:.1f}%", 100 * v.held_out->mape) : "-");
  }
  return o;
}

std::string validation_svg(const ValidationSummary& s) {
  // Log-log axes over the decades that hold every simulated point.
  double lo = 1e300, hi = 0;
  for (const auto& r : s.rows)
    if (r.simulated) {
      for (double v : {r.measured_tps_gpu, r.predicted_tps_gpu})
        if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
    }
  if (hi <= 0) lo = 1, hi = 10;
  const double d0 = std::floor(std::log10(lo)), d1 = std::max(d0 + 1, std::ceil(std::log10(hi)));
  const double W = 720, H = 720, left = 80, right = 200, top = 40, bottom = 70;
  const double pw = W - left - right, ph = H - top - bottom;
  auto px = [&](double v) { return left + (std::log10(v) - d0) / (d1 - d0) * pw; };
  auto py = [&](double v) { return top + ph - (std::log10(v) - d0) / (d1 - d0) * ph; };
  std::map<std::string, std::string> colors;
  const char* palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                           "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd"};
  for (const auto& f : s.families) colors[f.family] = palette[colors.size() % 16];
  std::string o;
  o += svg_open(W, H);
  o += fmt::format("<text x=\"{}\" y=\"24\" font-size=\"15\">clustersim validate: predicted vs measured tokens/s per "
                   "GPU (log-log)</text>\n", left);
  for (double d = d0; d <= d1; ++d) {
    const double v = std::pow(10.0, d);
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>\n", px(v), top,
                     top + ph);
    o += fmt::format("<line x1=\"{1:.1f}\" y1=\"{0:.1f}\" x2=\"{2:.1f}\" y2=\"{0:.1f}\" stroke=\"#ddd\"/>\n", py(v), left,
                     left + pw);
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">1e{}</text>\n", px(v), top + ph + 18, int(d));
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">1e{}</text>\n", left - 6, py(v) + 4, int(d));
  }
  o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", left, top, pw, ph);
  o += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"black\" stroke-dasharray=\"6 4\"/>\n",
                   px(std::pow(10.0, d0)), py(std::pow(10.0, d0)), px(std::pow(10.0, d1)), py(std::pow(10.0, d1)));
  o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">measured tokens/s per GPU</text>\n",
                   left + pw / 2, H - 25);
  o += fmt::format("<text transform=\"translate(22,{:.1f}) rotate(-90)\" text-anchor=\"middle\">predicted tokens/s per "
                   "GPU</text>\n", top + ph / 2);
  for (const auto& r : s.rows) {
    if (!r.simulated || r.measured_tps_gpu <= 0 || r.predicted_tps_gpu <= 0) continue;
    const std::string& c = colors[r.family];
    o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\" fill-opacity=\"{}\" stroke=\"{}\">"
                     "<title>{} {:+.1f}%</title></circle>\n",
                     px(r.measured_tps_gpu), py(r.predicted_tps_gpu), r.headline() ? c : "none",
                     r.headline() ? "0.8" : "0", c, svg_escape(r.id), 100 * r.error);
  }
  double ly = top + 10;
  for (const auto& f : s.families) {
    if (!f.simulated) continue;
    o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"/>\n", left + pw + 16, ly, colors[f.family]);
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{} ({})</text>\n", left + pw + 26, ly + 4, f.family, f.simulated);
    ly += 18;
  }
  o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">hollow: flagged, not in headline</text>\n", left + pw + 10, ly + 10);
  o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">headline MAPE {:.1f}% (n={})</text>\n", left + pw + 10, ly + 28,
                   100 * s.overall.headline.mape, s.overall.headline.count);
  return o + svg_close();
}

}  // namespace clustersim::reporters
