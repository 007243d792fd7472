#include "reporters/sweep_plot.hpp"

#include "reporters/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace clustersim::reporters {
namespace {

bool numeric(const std::string& s, double* v) {
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return end && *end == '\0' && !s.empty() && std::isfinite(*v);
}

// The smallest 1, 2 or 5 x 10^k at least `raw`: a tick step a reader can add up.
double round_step(double raw) {
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= raw * (1 - 1e-9)) return m * p;
  return 10 * p;
}

// A metric's axis name and the factor its values are shown with: MFU as a percentage.
std::pair<std::string, double> axis_of(const std::string& metric) {
  if (metric == "mfu" || metric == "hfu") return {metric == "mfu" ? "MFU (%)" : "HFU (%)", 100};
  return {metric, 1};
}

}  // namespace

std::string sweep_plot_svg(const std::vector<SweepPoint>& points, const std::string& x_label,
                           const std::string& metric, bool higher_is_better, const std::string& title) {
  const double W = 760, H = 440, L = 80, R = 20, T = 50, B = 60;
  const auto [y_label, scale] = axis_of(metric);
  // X positions: numeric values on a linear or (spanning ≥ 8×, all positive) log axis, else
  // categories in order of first appearance.
  bool all_numeric = !points.empty();
  double xmin = 1e300, xmax = -1e300;
  for (const auto& p : points) {
    double v;
    if (!numeric(p.x, &v)) all_numeric = false;
    else xmin = std::min(xmin, v), xmax = std::max(xmax, v);
  }
  const bool log_x = all_numeric && xmin > 0 && xmax / xmin >= 8;
  std::vector<std::string> categories;
  for (const auto& p : points)
    if (std::find(categories.begin(), categories.end(), p.x) == categories.end()) categories.push_back(p.x);
  if (all_numeric)
    std::sort(categories.begin(), categories.end(),
              [](const std::string& a, const std::string& b) { return std::stod(a) < std::stod(b); });
  auto x_of = [&](const std::string& x) {
    if (!all_numeric || xmax == xmin) {
      const auto i = std::find(categories.begin(), categories.end(), x) - categories.begin();
      return L + (W - L - R) * (double(i) + 0.5) / std::max<std::size_t>(1, categories.size());
    }
    const double v = std::stod(x);
    const double f = log_x ? std::log(v / xmin) / std::log(xmax / xmin) : (v - xmin) / (xmax - xmin);
    return L + 20 + (W - L - R - 40) * f;
  };
  double top = 0;
  for (const auto& p : points) top = std::max(top, p.y * scale);
  const double step = round_step(top > 0 ? top * 1.05 / 5 : 0.2);
  const int ticks = std::max(1, int(std::ceil(top * 1.05 / step - 1e-9)));
  const double ymax = step * ticks;  // in shown units
  auto y_of = [&](double y) { return T + (H - T - B) * (1 - y * scale / ymax); };
  std::string o = svg_open(W, H) + fmt::format(
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>\n<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>\n",
      L, H - B, W - R, H - B, L, T, L, H - B);
  for (int i = 0; i <= ticks; ++i) {
    const double shown = step * i, y = shown / scale;
    o += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#eee\"/><text x=\"{}\" y=\"{:.1f}\" "
                     "text-anchor=\"end\" fill=\"#555\">{:g}</text>\n",
                     L, y_of(y), W - R, y_of(y), L - 6, y_of(y) + 4, shown);
  }
  const std::string heading = title.empty() ? fmt::format("{} by {}", y_label, x_label) : title;
  o += fmt::format("<text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-weight=\"bold\">{}</text>\n", W / 2,
                   svg_escape(heading));
  // Legend: what a dot and the line are.
  o += fmt::format("<circle cx=\"{}\" cy=\"36\" r=\"3\" fill=\"#4c78a8\" fill-opacity=\"0.5\"/><text x=\"{}\" y=\"40\" "
                   "fill=\"#555\">each configuration</text>\n<line x1=\"{}\" y1=\"36\" x2=\"{}\" y2=\"36\" stroke=\"#e45756\" "
                   "stroke-width=\"2\"/><text x=\"{}\" y=\"40\" fill=\"#555\">best per {} ({} {})</text>\n",
                   L + 6, L + 14, L + 160, L + 180, L + 186, svg_escape(x_label), higher_is_better ? "highest" : "lowest",
                   svg_escape(y_label));
  for (const auto& c : categories)
    o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\">{}</text>\n", x_of(c), H - B + 16,
                     svg_escape(c));
  o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>\n", (L + W - R) / 2, H - 18, svg_escape(x_label),
                   log_x ? " (log scale)" : "");
  o += fmt::format("<text transform=\"translate(18,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n", (T + H - B) / 2,
                   svg_escape(y_label));
  std::map<std::string, double> best;
  for (const auto& p : points) {
    auto [it, fresh] = best.emplace(p.x, p.y);
    if (!fresh) it->second = higher_is_better ? std::max(it->second, p.y) : std::min(it->second, p.y);
    o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#4c78a8\" fill-opacity=\"0.5\"/>\n", x_of(p.x),
                     y_of(p.y));
  }
  std::string path;
  for (const auto& c : categories)
    path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", x_of(c), y_of(best[c]));
  if (!path.empty())
    o += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"#e45756\" stroke-width=\"2\"/>\n", path);
  return o + svg_close();
}

}  // namespace clustersim::reporters
