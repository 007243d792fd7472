#include "reporters/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reporters/explain_report.hpp"
#include "reporters/report.hpp"
#include "reporters/svg.hpp"
#include "studies/error_band.hpp"
#include "units/units.hpp"

namespace clustersim::reporters {
namespace {

constexpr const char* kStyle = R"(body{font-family:sans-serif;margin:24px auto;max-width:1280px;color:#222}
h1{font-size:22px;margin-bottom:4px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc;padding-bottom:3px}
p.sub{color:#555;margin-top:0}table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}td{white-space:nowrap}th{background:#f4f4f4}td.l,th.l{text-align:left}
table.kv th{text-align:left}pre{font-size:12px;background:#f8f8f8;padding:8px;overflow-x:auto}
svg{display:block;margin:8px 0}.note{color:#555;font-size:13px}.bad{color:#b00;font-weight:bold}
)";

// 403200 → "403.2 k" (the text report's SI prefixes).
std::string si(double v) {
  const char* prefixes[] = {"", " k", " M", " G", " T", " P"};
  int i = 0;
  while (std::abs(v) >= 1000.0 && i < 5) v /= 1000.0, ++i;
  return fmt::format("{:.4g}{}", v, prefixes[i]);
}

// One summary row; `id` and `data-value` carry the exact number for scripts and tests.
std::string kv_row(const std::string& label, const char* id, double value, const std::string& shown) {
  return fmt::format("<tr><th>{}</th><td id=\"{}\" data-value=\"{:.17g}\">{}</td></tr>\n", svg_escape(label), id, value,
                     svg_escape(shown));
}

std::string summary_section(const scenarios::Report& r) {
  const auto& sc = r.scenario;
  std::string o = "<section id=\"summary\"><h2>Summary</h2>\n<table class=\"kv\">\n";
  // The error band beside the figures it qualifies, as the text report prints it (issue 31).
  const auto band = studies::error_band(sc, studies::kDefaultBandConfidence);
  o += kv_row("step time", "step_time_s", r.step_time_s,
              fmt::format("{:.4f} s ({:.4f} to {:.4f} s)", r.step_time_s, band.low * r.step_time_s, band.high * r.step_time_s));
  o += kv_row("error band", "error_band_high", band.high,
              fmt::format("{:.0f} % confidence: {:+.0f} % / {:+.0f} % on the step time, from {} published runs ({}), "
                          "out of sample", 100 * band.confidence, 100 * (band.low - 1), 100 * (band.high - 1), band.rows,
                          band.basis));
  o += kv_row("throughput", "tokens_per_s", r.tokens_per_s, si(r.tokens_per_s) + " tokens/s");
  o += kv_row("throughput per GPU", "tokens_per_s_per_gpu", r.tokens_per_s_per_gpu,
              fmt::format("{:.0f} tokens/s", r.tokens_per_s_per_gpu));
  o += kv_row("MFU", "mfu", r.mfu,
              fmt::format("{:.1f} % ({:.1f} to {:.1f} %)", 100 * r.mfu, 100 * r.mfu / band.high, 100 * r.mfu / band.low));
  o += kv_row("HFU", "hfu", r.hfu, fmt::format("{:.1f} %", 100 * r.hfu));
  o += kv_row("model FLOP/s per GPU", "tflops_per_gpu", r.tflops_per_gpu, fmt::format("{:.0f} TFLOP/s", r.tflops_per_gpu));
  o += kv_row("peak memory per GPU", "peak_memory_bytes", r.memory.total_bytes,
              fmt::format("{:.1f} GiB of {:.1f} GiB{}", r.memory.total_bytes / units::kBytesPerGiB, r.memory.capacity_bytes / units::kBytesPerGiB,
                          r.memory.fits() ? "" : " (does not fit)"));
  if (sc.training.tokens > 0) {
    o += kv_row("days to train", "days_to_train", r.days_to_train,
                fmt::format("{:.2f} days ({:.2f} to {:.2f})", r.days_to_train, band.low * r.days_to_train,
                            band.high * r.days_to_train));
    o += kv_row("days to train, ideal", "days_to_train_ideal", r.days_to_train_ideal,
                fmt::format("{:.2f} days", r.days_to_train_ideal));
  }
  if (sc.reliability.enabled) o += kv_row("goodput", "goodput", r.run.goodput, fmt::format("{:.1f} %", 100 * r.run.goodput));
  o += fmt::format("<tr><th>GPUs</th><td id=\"num_gpus\" data-value=\"{0}\">{0}</td></tr>\n</table>\n", r.num_gpus);
  if (!r.memory.fits()) o += "<p class=\"bad\">This configuration does not fit in GPU memory.</p>\n";
  o += "<details><summary>The text report (model, hardware, plan, assumptions, where the step goes)</summary><pre>" +
       svg_escape(format_text(r)) + "</pre></details>\n</section>\n";
  return o;
}

std::string memory_section(const scenarios::Report& r) {
  std::string o = "<section id=\"memory\"><h2>Memory per GPU by component and pipeline stage</h2>\n" +
                  svg_inline(memory_chart_svg(r.memory_per_stage)) +
                  "<table><tr><th>stage</th><th>weights</th><th>gradients</th><th>optimizer</th><th>activations</th>"
                  "<th>logits</th><th>reserved</th><th>total</th><th>capacity</th></tr>\n";
  for (const auto& s : r.memory_per_stage) {
    o += fmt::format("<tr><td>{}</td>", s.stage);
    for (double v : {s.weights_bytes, s.gradients_bytes, s.optimizer_bytes, s.activations_bytes, s.logits_bytes,
                     s.reserved_bytes, s.total_bytes, s.capacity_bytes})
      o += fmt::format("<td data-value=\"{:.17g}\">{:.2f}</td>", v, v / units::kBytesPerGiB);
    o += "</tr>\n";
  }
  return o + "</table><p class=\"note\">GiB (2<sup>30</sup> bytes).</p>\n</section>\n";
}

std::string roofline_section(const scenarios::Report& r, const scenarios::Explanation& ex) {
  std::string o = fmt::format("<section id=\"roofline\"><h2>Roofline of the top kernels</h2>\n<p class=\"note\">Ridge point "
                              "{:.0f} FLOP/byte (peak FLOP/s ÷ HBM bandwidth); times are per step per GPU.</p>\n",
                              ex.ridge_flop_per_byte);
  o += "<table><tr><th class=\"l\">kernel</th><th class=\"l\">kind</th><th class=\"l\">bound</th><th>ms/step</th>"
       "<th>share of step</th><th>calls/step</th><th>FLOP/byte</th><th>achieved TFLOP/s</th></tr>\n";
  const std::size_t n = std::min<std::size_t>(ex.ops.size(), 15);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& op = ex.ops[i];
    o += fmt::format("<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{:.3f}</td><td>{:.1f} %</td>"
                     "<td>{:.1f}</td><td>{:.1f}</td><td>{:.0f}</td></tr>\n",
                     svg_escape(op.name), svg_escape(op.kind), svg_escape(op.bound), op.seconds_per_step * 1e3,
                     100 * op.seconds_per_step / r.step_time_s, op.calls_per_step, op.intensity, op.achieved_flops / 1e12);
  }
  o += "</table>\n";
  if (!ex.advice.empty()) {
    o += "<h2>Advice (each change re-simulated)</h2>\n<ul>\n";
    for (const auto& a : ex.advice)
      o += fmt::format("<li>{}: {} → MFU {:.1f} % → {:.1f} %{}</li>\n", svg_escape(a.symptom), svg_escape(a.change),
                       100 * a.mfu_before, 100 * a.mfu_after, a.fits ? "" : " (does not fit in memory)");
    o += "</ul>\n";
  }
  return o + "</section>\n";
}

}  // namespace

std::string html_page(const std::string& title, const std::string& body) {
  return fmt::format("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>{}</title>\n"
                     "<style>\n{}</style>\n</head>\n<body>\n{}</body>\n</html>\n",
                     svg_escape(title), kStyle, body);
}

std::string run_html(const scenarios::Report& r, const scenarios::Explanation& ex,
                     const std::vector<models::TimelineEntry>& timeline) {
  const auto& sc = r.scenario;
  const auto& p = sc.parallel;
  std::string body = fmt::format("<h1>{}</h1>\n<p class=\"sub\">{} on {} × {} · tp {} × pp {} × cp {} × dp {}, ZeRO-{} · "
                                 "from {}</p>\n",
                                 svg_escape(sc.name), svg_escape(sc.model_preset), r.num_gpus, svg_escape(sc.hardware_preset),
                                 p.tp, p.pp, p.cp, p.dp, p.zero_stage, svg_escape(sc.source));
  body += summary_section(r);
  body += "<section id=\"waterfall\"><h2>Where the MFU went</h2>\n" + svg_inline(waterfall_svg(ex, r)) +
          fmt::format("<p class=\"note\">{}</p>\n</section>\n", svg_escape(ex.method));
  body += memory_section(r);
  body += "<section id=\"timeline\"><h2>One step, kernel by kernel</h2>\n<p class=\"note\">One row per stream of each "
          "pipeline stage's representative rank; hover a bar for its tasks and times.</p>\n" +
          svg_inline(timeline_svg(timeline)) + "</section>\n";
  body += roofline_section(r, ex);
  return html_page(sc.name + " — clustersim", body);
}

}  // namespace clustersim::reporters
