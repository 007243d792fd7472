#include "reporters/html_charts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "reporters/svg.hpp"
#include "units/units.hpp"

namespace clustersim::reporters {
namespace {

// Round tick steps (1, 2, 5 × 10^k) covering [lo, hi] with about `n` intervals.
std::vector<double> nice_ticks(double lo, double hi, int n) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / n, mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
  std::vector<double> t;
  const long first = std::lround(std::floor(lo / step)), last = std::lround(std::ceil(hi / step - 1e-9));
  for (long i = first; i <= last; ++i) t.push_back(double(i) * step);
  return t;
}

// A tick label: 4 significant digits, thousands as k and millions as M (never e-notation).
std::string tick_label(double v) {
  if (std::abs(v) >= 1e6) return fmt::format("{:.4g} M", v / 1e6);
  if (std::abs(v) >= 1e4) return fmt::format("{:.4g} k", v / 1e3);
  return fmt::format("{:.4g}", v);
}

std::string legend_item(double x, double y, const char* color, const std::string& label) {
  return fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
                     "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
                     x, y, color, x + 16, y + 10, svg_escape(label));
}

const char* kind_color(models::TaskKind k) {
  using models::TaskKind;
  switch (k) {
    case TaskKind::forward: return "#4c78a8";
    case TaskKind::backward: return "#f58518";
    case TaskKind::recompute: return "#b279a2";
    case TaskKind::optimizer: return "#54a24b";
    case TaskKind::dp_grad_reduce: return "#e45756";
    case TaskKind::dp_param_gather: return "#ff9da6";
    case TaskKind::sync: return "#9d755d";
    case TaskKind::tp_comm: return "#72b7b2";
    case TaskKind::cp_comm: return "#eeca3b";
    case TaskKind::pp_send: return "#bab0ac";
    case TaskKind::ep_comm:
    case TaskKind::ep_exposed:
      return "#17becf";
    case TaskKind::weight_grad: return "#fdbf6f";
  }
  return "#000";
}

// Streams in the order the engine creates them (models/step.hpp), unknown names last.
int stream_rank(const std::string& s) {
  static const char* order[] = {"compute", "tp_comm", "cp_comm", "pp_send_fwd", "pp_send_bwd", "dp_reduce", "dp_gather"};
  for (int i = 0; i < 7; ++i)
    if (s == order[i]) return i;
  return 7;
}

}  // namespace

std::string memory_chart_svg(const std::vector<models::MemoryEstimate>& stages) {
  const int left = 90, plot_w = 760, bar_h = 22, top = 40;
  const int height = top + int(stages.size()) * bar_h + 70;
  double hi = 0;
  for (const auto& s : stages) hi = std::max({hi, s.total_bytes, s.capacity_bytes});
  const auto ticks = nice_ticks(0, hi / units::kBytesPerGiB, 8);
  const double x_max = ticks.back();
  auto x_of = [&](double gib) { return left + gib / x_max * plot_w; };
  std::string o = svg_open(left + plot_w + 40, height);
  for (double t : ticks)
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>"
                     "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" fill=\"#555\">{4:g}</text>\n",
                     x_of(t), top - 5, height - 50, height - 36, t);
  o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">GiB per GPU</text>\n", left + plot_w / 2, height - 20);
  static const char* names[] = {"weights", "gradients", "optimizer", "activations", "logits", "reserved"};
  static const char* colors[] = {"#4c78a8", "#f58518", "#54a24b", "#e45756", "#b279a2", "#bab0ac"};
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const auto& s = stages[i];
    const double parts[] = {s.weights_bytes, s.gradients_bytes, s.optimizer_bytes, s.activations_bytes, s.logits_bytes, s.reserved_bytes};
    const double y = top + i * bar_h;
    o += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">stage {}</text>\n", left - 8, y + 15, s.stage);
    double at = 0;
    for (int k = 0; k < 6; ++k) {
      o += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>stage {}: {} {:.2f} GiB</title></rect>\n",
                       x_of(at), y + 3, x_of(at + parts[k] / units::kBytesPerGiB) - x_of(at), bar_h - 6, colors[k], s.stage, names[k], parts[k] / units::kBytesPerGiB);
      at += parts[k] / units::kBytesPerGiB;
    }
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"black\" stroke-width=\"2\">"
                     "<title>capacity {3:.2f} GiB</title></line>\n",
                     x_of(s.capacity_bytes / units::kBytesPerGiB), y + 1, y + bar_h - 1, s.capacity_bytes / units::kBytesPerGiB);
  }
  for (int k = 0; k < 6; ++k) o += legend_item(left + k * 110, 12, colors[k], names[k]);
  o += fmt::format("<line x1=\"{0}\" y1=\"12\" x2=\"{0}\" y2=\"24\" stroke=\"black\" stroke-width=\"2\"/>"
                   "<text x=\"{1}\" y=\"22\">capacity</text>\n", left + 6 * 110 + 6, left + 6 * 110 + 12);
  return o + svg_close();
}

namespace {

struct Segment {
  models::TaskKind kind;
  double t0, t1;
  int tasks;
};

// Merges a row's tasks (sorted by start) of one kind whose gap is under half a pixel.
std::vector<Segment> merge_row(std::vector<const models::TimelineEntry*> row, double s_per_px) {
  std::sort(row.begin(), row.end(), [](auto* a, auto* b) { return a->start_s != b->start_s ? a->start_s < b->start_s : a->end_s < b->end_s; });
  std::vector<Segment> out;
  for (const auto* e : row) {
    if (!out.empty() && out.back().kind == e->kind && e->start_s - out.back().t1 < 0.5 * s_per_px) {
      out.back().t1 = std::max(out.back().t1, e->end_s);
      ++out.back().tasks;
    } else {
      out.push_back({e->kind, e->start_s, e->end_s, 1});
    }
  }
  return out;
}

}  // namespace

std::string timeline_svg(const std::vector<models::TimelineEntry>& timeline) {
  std::map<std::pair<int, std::pair<int, std::string>>, std::vector<const models::TimelineEntry*>> rows;
  double t_end = 0;
  for (const auto& e : timeline) {
    rows[{e.stage, {stream_rank(e.stream), e.stream}}].push_back(&e);
    t_end = std::max(t_end, e.end_s);
  }
  const int left = 170, plot_w = 1000, row_h = 16, top = 44;
  const int height = top + int(rows.size()) * row_h + 50;
  const auto ticks = nice_ticks(0, t_end * 1e3, 10);
  const double x_max_ms = ticks.back(), s_per_px = x_max_ms / 1e3 / plot_w;
  auto x_of = [&](double s) { return left + s * 1e3 / x_max_ms * plot_w; };
  std::string o = svg_open(left + plot_w + 30, height);
  for (double t : ticks)
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>"
                     "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\" fill=\"#555\">{4:g}</text>\n",
                     x_of(t / 1e3), top - 4, height - 44, height - 30, t);
  o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">ms into the step</text>\n", left + plot_w / 2, height - 12);
  int r = 0;
  for (const auto& [key, entries] : rows) {
    const double y = top + r++ * row_h;
    o += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" font-size=\"11\">stage {} {}</text>\n", left - 6, y + 12,
                     key.first, svg_escape(key.second.second));
    for (const auto& s : merge_row(entries, s_per_px))
      o += fmt::format("<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\"><title>{}: {} task{}, {:.3f}–{:.3f} ms</title></rect>\n",
                       x_of(s.t0), y + 2, std::max(0.5, x_of(s.t1) - x_of(s.t0)), row_h - 3, kind_color(s.kind),
                       models::name(s.kind), s.tasks, s.tasks == 1 ? "" : "s", s.t0 * 1e3, s.t1 * 1e3);
  }
  using models::TaskKind;
  double x = left;
  for (TaskKind k : {TaskKind::forward, TaskKind::backward, TaskKind::recompute, TaskKind::optimizer, TaskKind::dp_grad_reduce,
                     TaskKind::dp_param_gather, TaskKind::sync, TaskKind::tp_comm, TaskKind::cp_comm, TaskKind::pp_send, TaskKind::ep_comm,
                     TaskKind::weight_grad}) {
    if (std::none_of(timeline.begin(), timeline.end(), [k](const models::TimelineEntry& e) { return e.kind == k; })) continue;
    o += legend_item(x, 10, kind_color(k), models::name(k));
    x += 30 + 7.0 * std::string(models::name(k)).size();  // 12 px sans-serif is about 7 px a character
  }
  return o + svg_close();
}

std::string scatter_svg(const ScatterSpec& spec) {
  const int left = 90, top = 50, plot_w = 820, plot_h = 420, width = left + plot_w + 40, height = top + plot_h + 60;
  double x_lo = std::numeric_limits<double>::max(), x_hi = -x_lo, y_lo = x_lo, y_hi = -x_lo;
  for (const auto& p : spec.points)
    x_lo = std::min(x_lo, p.x), x_hi = std::max(x_hi, p.x), y_lo = std::min(y_lo, p.y), y_hi = std::max(y_hi, p.y);
  if (spec.points.empty()) x_lo = y_lo = 0, x_hi = y_hi = 1;
  const bool cat = !spec.x_categories.empty();
  if (cat) x_lo = -0.5, x_hi = spec.x_categories.size() - 0.5;
  const auto yt = nice_ticks(y_lo - 0.05 * (y_hi - y_lo), y_hi + 0.05 * (y_hi - y_lo), 8);
  const auto xt = cat ? std::vector<double>{} : nice_ticks(x_lo - 0.03 * (x_hi - x_lo), x_hi + 0.03 * (x_hi - x_lo), 10);
  const double x0 = cat ? x_lo : xt.front(), x1 = cat ? x_hi : xt.back();
  auto X = [&](double v) { return left + (v - x0) / (x1 - x0) * plot_w; };
  auto Y = [&](double v) { return top + plot_h - (v - yt.front()) / (yt.back() - yt.front()) * plot_h; };
  std::string o = svg_open(width, height) +
                  fmt::format("<text x=\"{}\" y=\"20\" font-size=\"15\" font-weight=\"bold\">{}</text>\n", left, svg_escape(spec.title));
  for (double t : yt)
    o += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/><text x=\"{3}\" y=\"{4:.1f}\" "
                     "text-anchor=\"end\" fill=\"#555\">{5}</text>\n", left, Y(t), left + plot_w, left - 6, Y(t) + 4, tick_label(t));
  for (std::size_t i = 0; i < (cat ? spec.x_categories.size() : xt.size()); ++i) {
    const double v = cat ? double(i) : xt[i];
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/><text x=\"{0:.1f}\" y=\"{3}\" "
                     "text-anchor=\"middle\" fill=\"#555\">{4}</text>\n", X(v), top, top + plot_h, top + plot_h + 16,
                     cat ? svg_escape(spec.x_categories[i]) : tick_label(v));
  }
  o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + plot_w / 2, height - 12, svg_escape(spec.x_label));
  o += fmt::format("<text x=\"16\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 16 {0})\">{1}</text>\n", top + plot_h / 2,
                   svg_escape(spec.y_label));
  std::set<std::pair<long, long>> drawn;  // one circle per pixel: a 10^5-point sweep stays a small file
  for (const auto& p : spec.points) {
    if (!drawn.emplace(std::lround(X(p.x)), std::lround(Y(p.y))).second) continue;
    o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#4c78a8\" fill-opacity=\"0.45\"><title>{}</title></circle>\n",
                     X(p.x), Y(p.y), svg_escape(p.tip));
  }
  if (!spec.x_marker_label.empty() && spec.x_marker >= x0 && spec.x_marker <= x1)
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#888\" stroke-dasharray=\"6 4\"/>"
                     "<text x=\"{3:.1f}\" y=\"{4}\" fill=\"#555\">{5}</text>\n",
                     X(spec.x_marker), top, top + plot_h, X(spec.x_marker) + 4, top + 14, svg_escape(spec.x_marker_label));
  std::string path;
  for (std::size_t i : spec.front) path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", X(spec.points[i].x), Y(spec.points[i].y));
  if (!path.empty()) o += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"#e45756\" stroke-width=\"1.5\"/>\n", path);
  for (std::size_t i : spec.front)
    o += fmt::format("<circle class=\"front\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"#e45756\"><title>{}</title></circle>\n",
                     X(spec.points[i].x), Y(spec.points[i].y), svg_escape(spec.points[i].tip));
  o += fmt::format("<circle cx=\"{0}\" cy=\"36\" r=\"5\" fill=\"#e45756\"/><text x=\"{1}\" y=\"40\">{2} ({3} of {4} points)</text>\n",
                   left + plot_w - 330, left + plot_w - 322, svg_escape(spec.front_label), spec.front.size(), spec.points.size());
  return o + svg_close();
}

std::vector<std::size_t> pareto_front_min_min(const std::vector<ScatterPoint>& points) {
  std::vector<std::size_t> order(points.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return points[a].x != points[b].x ? points[a].x < points[b].x : points[a].y < points[b].y;
  });
  std::vector<std::size_t> front;
  double best_y = std::numeric_limits<double>::infinity();
  for (std::size_t i : order)
    if (points[i].y < best_y) front.push_back(i), best_y = points[i].y;
  return front;
}

std::vector<std::size_t> best_per_x(const std::vector<ScatterPoint>& points, bool higher_is_better) {
  std::map<double, std::size_t> best;
  for (std::size_t i = 0; i < points.size(); ++i) {
    auto [it, fresh] = best.emplace(points[i].x, i);
    const double cur = points[it->second].y, y = points[i].y;
    if (!fresh && (higher_is_better ? y > cur : y < cur)) it->second = i;
  }
  std::vector<std::size_t> out;
  for (const auto& [x, i] : best) out.push_back(i);
  return out;
}

}  // namespace clustersim::reporters
