#include "reporters/explain_report.hpp"

#include "reporters/svg.hpp"
#include "studies/json_value.hpp"
#include "units/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace clustersim::reporters {

using namespace studies;  // the library this front end prints

std::string format_explain_text(const scenarios::Explanation& ex, const scenarios::Report& r, int top_ops) {
  std::string o = "\n  where the MFU went (points of peak; seconds per step)\n";
  o += fmt::format("    {:<72} {:>6.1f}\n", "peak", 100.0);
  for (const auto& w : ex.waterfall)
    if (w.mfu_points != 0 || w.seconds != 0)  // causes this plan does not have are left out
      o += fmt::format("    − {:<70} {:>6.1f}   {:>8.4f} s\n", w.cause, 100 * w.mfu_points, w.seconds);
  o += fmt::format("    {:<72} {:>6.1f}\n", "= achieved MFU", 100 * r.mfu);
  o += fmt::format("    ({})\n", ex.method);
  o += fmt::format("\n  top kernels by time per step (ridge point {:.0f} FLOP/byte)\n", ex.ridge_flop_per_byte);
  o += fmt::format("    {:<22} {:<9} {:<8} {:>9} {:>7} {:>10} {:>12}\n", "kernel", "kind", "bound", "s/step", "share",
                   "FLOP/byte", "TFLOP/s");
  for (std::size_t i = 0; i < ex.ops.size() && int(i) < top_ops; ++i) {
    const auto& op = ex.ops[i];
    o += fmt::format("    {:<22} {:<9} {:<8} {:>9.4f} {:>6.1f}% {:>10.1f} {:>12.1f}\n", op.name, op.kind, op.bound,
                     op.seconds_per_step, 100 * op.seconds_per_step / r.step_time_s, op.intensity,
                     op.achieved_flops / 1e12);
  }
  if (!ex.by_part.empty()) {
    double total = 0;
    for (const auto& [part, s] : ex.by_part) total += s;
    o += "\n  GPU kernel time by layer part (s/step; communication not included)\n";
    for (const auto& [part, s] : ex.by_part) o += fmt::format("    {:<28} {:>9.4f} {:>6.1f}%\n", part, s, 100 * s / total);
  }
  o += "\n  advice (vpp, zb-h1 when the bubble is large, micro-batch, recompute, TP/DP overlap, ZeRO stage, CP and, for MoE,\n"
       "  EP, dispatcher and A2A overlap searched over their ranges; each change simulated and listed only when it raises MFU,\n"
       "  i.e. shortens the step, at the same batch and GPUs)\n";
  if (ex.advice.empty()) o += "    none: no searched change beats this plan\n";
  for (const auto& a : ex.advice) {
    // Peak memory per GPU where the change moves it by at least the 0.1 GiB shown.
    const double gib = units::kBytesPerGiB;
    const bool memory_moves = std::abs(a.memory_after_bytes - a.memory_before_bytes) >= 0.05 * gib;
    o += fmt::format("    {}\n      → {}: MFU {:.1f} % → {:.1f} %, step {:.3f} s → {:.3f} s{}{}\n", a.symptom, a.change,
                     100 * a.mfu_before, 100 * a.mfu_after, a.step_before_s, a.step_after_s,
                     memory_moves ? fmt::format(", peak memory {:.1f} → {:.1f} GiB", a.memory_before_bytes / gib,
                                                a.memory_after_bytes / gib)
                                  : std::string(),
                     a.fits_before ? "" : ", and it now fits in memory");
  }
  return o;
}

Json format_explain_json(const scenarios::Explanation& ex, const scenarios::Report&) {
  Json waterfall = Json::array(), ops = Json::array(), by_part = Json::array(), advice = Json::array();
  for (const auto& w : ex.waterfall)
    waterfall.push_back({{"cause", w.cause},
                         {"mfu_points", json_number_value(w.mfu_points)},
                         {"seconds", json_number_value(w.seconds)}});
  for (const auto& op : ex.ops)
    ops.push_back({{"name", op.name},
                   {"kind", op.kind},
                   {"bound", op.bound},
                   {"seconds_per_step", json_number_value(op.seconds_per_step)},
                   {"calls_per_step", json_number_value(op.calls_per_step)},
                   {"flop", json_number_value(op.flop)},
                   {"bytes", json_bytes_value(op.bytes)},
                   {"flop_per_byte", json_number_value(op.intensity)},
                   {"achieved_flops", json_number_value(op.achieved_flops)}});
  for (const auto& [part, s] : ex.by_part)
    by_part.push_back({{"part", part}, {"seconds_per_step", json_number_value(s)}});
  for (const auto& a : ex.advice)
    advice.push_back({{"symptom", a.symptom},
                      {"change", a.change},
                      {"mfu_before", json_number_value(a.mfu_before)},
                      {"mfu_after", json_number_value(a.mfu_after)},
                      {"step_time_s_before", json_number_value(a.step_before_s)},
                      {"step_time_s_after", json_number_value(a.step_after_s)},
                      {"fits_in_memory_before", a.fits_before},
                      {"fits_in_memory", a.fits},
                      {"peak_memory_bytes_before", json_bytes_value(a.memory_before_bytes)},
                      {"peak_memory_bytes_after", json_bytes_value(a.memory_after_bytes)}});
  return {{"method", ex.method},
          {"waterfall", waterfall},
          {"ridge_flop_per_byte", json_number_value(ex.ridge_flop_per_byte)},
          {"ops", ops},
          {"by_part", by_part},
          {"advice", advice}};
}

namespace {

// A label in lines of at most `width` characters, broken at spaces (a longer word stays whole):
// the waterfall's causes are sentences, which cut at the chart's left edge until issue 31.
std::vector<std::string> wrapped(const std::string& text, std::size_t width) {
  std::vector<std::string> lines{""};
  std::size_t from = 0;
  while (from < text.size()) {
    const std::size_t end = std::min(text.find(' ', from), text.size());
    const std::string word = text.substr(from, end - from);
    if (!lines.back().empty() && lines.back().size() + 1 + word.size() > width) lines.emplace_back();
    lines.back() += (lines.back().empty() ? "" : " ") + word;
    from = end + 1;
  }
  return lines;
}

}  // namespace

std::string waterfall_svg(const scenarios::Explanation& ex, const scenarios::Report& r) {
  // Labels at 12 px (about 6.6 px a character) in lines of 64 characters fit the 470 px left of the bars.
  const int left = 470, width = 900, plot_w = width - left - 80, line_h = 14;
  constexpr std::size_t kLabelChars = 64;
  auto rows_of = [&](const std::string& label) { return std::max<int>(1, int(wrapped(label, kLabelChars).size())); };
  int body = 2 * 26;
  for (const auto& w : ex.waterfall) body += std::max(26, rows_of(w.cause) * line_h + 12);
  const int height = 70 + body + 30;
  auto x_of = [&](double frac) { return left + frac * plot_w; };
  std::string o = svg_open(width, height) +
                  fmt::format("<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}: where the MFU went</text>\n",
                              svg_escape(r.scenario.name));
  for (int pct = 0; pct <= 100; pct += 20)
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"40\" x2=\"{0:.1f}\" y2=\"{1}\" stroke=\"#ddd\"/>"
                     "<text x=\"{0:.1f}\" y=\"{2}\" text-anchor=\"middle\" fill=\"#555\">{3}%</text>\n",
                     x_of(pct / 100.0), height - 25, height - 10, pct);
  double y = 45;
  auto bar = [&](const std::string& label, double from, double to, const char* color, const std::string& value) {
    const auto lines = wrapped(label, kLabelChars);
    const int h = std::max(26, int(lines.size()) * line_h + 12);
    const double x0 = x_of(std::min(from, to)), x1 = x_of(std::max(from, to));
    o += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" font-size=\"12\"><title>{}</title>", left - 8,
                     y + h / 2.0 - (double(lines.size()) - 1) * line_h / 2 + 4, svg_escape(label));
    for (std::size_t i = 0; i < lines.size(); ++i)
      o += fmt::format("<tspan x=\"{}\" dy=\"{}\">{}</tspan>", left - 8, i ? line_h : 0, svg_escape(lines[i]));
    o += "</text>\n";
    o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>\n", x0, y + h / 2.0 - 10,
                     std::max(1.0, x1 - x0), 20, color);
    o += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#333\">{}</text>\n", x1 + 4, y + h / 2.0 + 5, value);
    y += h;
  };
  bar("peak", 0, 1, "#4c78a8", "100%");
  double level = 1.0;
  for (const auto& w : ex.waterfall) {
    bar(w.cause, level, level - w.mfu_points, w.mfu_points >= 0 ? "#e45756" : "#54a24b",
        fmt::format("{:.1f} pts", 100 * w.mfu_points));
    level -= w.mfu_points;
  }
  bar("achieved MFU", 0, r.mfu, "#72b7b2", fmt::format("{:.1f}%", 100 * r.mfu));
  return o + svg_close();
}

}  // namespace clustersim::reporters
