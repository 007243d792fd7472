// StudyHtml (tools/html_report.hpp): the HTML page of a sweep or a plan search.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "studies/sweep_table.hpp"
#include "reporters/html_report.hpp"
#include "reporters/svg.hpp"
#include "units/units.hpp"

namespace clustersim::reporters {
namespace {

bool read_number(const std::string& cell, double* v) {
  if (cell.empty()) return false;
  char* end = nullptr;
  *v = std::strtod(cell.c_str(), &end);
  return end == cell.c_str() + cell.size();
}

// The metric columns of the tables, with their heading and how a cell is shown.
struct MetricColumn {
  const char* key;
  const char* heading;
  std::string (*show)(double);
};
const MetricColumn kMetrics[] = {
    {"mfu", "MFU", [](double v) { return fmt::format("{:.1f} %", 100 * v); }},
    {"step_time_s", "step time (s)", [](double v) { return fmt::format("{:.4g}", v); }},
    {"days_to_train", "days", [](double v) { return fmt::format("{:.2f}", v); }},
    {"gpu_hours", "GPU-hours", [](double v) { return v >= 1e4 ? fmt::format("{:.0f}", v) : fmt::format("{:.4g}", v); }},
    {"cost_usd", "cost (USD)", [](double v) { return fmt::format("{:.0f}", v); }},
    {"peak_memory_bytes", "memory (GiB)", [](double v) { return fmt::format("{:.1f}", v / units::kBytesPerGiB); }},
};

std::string cell_or_blank(const std::vector<std::string>& header, const std::vector<std::string>& cells, const char* key) {
  const auto col = studies::column_of(header, key);
  return col && *col < cells.size() ? cells[*col] : std::string();
}

}  // namespace

StudyHtml::StudyHtml(std::string title, std::vector<std::string> header, std::vector<std::string> config_columns,
                     std::string metric, bool higher_is_better)
    : title_(std::move(title)), header_(std::move(header)), config_columns_(std::move(config_columns)),
      metric_(std::move(metric)), higher_is_better_(higher_is_better) {}

void StudyHtml::add_note(const std::string& text) { notes_.push_back(text); }

void StudyHtml::mark_x(double x, const std::string& label) { marker_x_ = x, marker_label_ = label; }

void StudyHtml::offer(const std::vector<std::string>& cells) {
  if (cell_or_blank(header_, cells, "status") != "ok") return;
  Kept k;
  if (!config_columns_.empty()) k.x_cell = cell_or_blank(header_, cells, config_columns_.front().c_str());
  for (const auto& c : config_columns_) k.tip += (k.tip.empty() ? "" : ", ") + c + "=" + cell_or_blank(header_, cells, c.c_str());
  k.has_metric = read_number(cell_or_blank(header_, cells, metric_.c_str()), &k.metric);
  k.has_days = read_number(cell_or_blank(header_, cells, "days_to_train"), &k.days) &&
               read_number(cell_or_blank(header_, cells, "gpu_hours"), &k.gpu_hours) && k.days > 0;
  k.has_cost = read_number(cell_or_blank(header_, cells, "cost_usd"), &k.cost);
  kept_.push_back(std::move(k));
}

ScatterSpec StudyHtml::chart() const {
  ScatterSpec s;
  const bool by_days = std::any_of(kept_.begin(), kept_.end(), [](const Kept& k) { return k.has_days; });
  if (by_days) {
    const bool cost = std::all_of(kept_.begin(), kept_.end(), [](const Kept& k) { return !k.has_days || k.has_cost; });
    s.title = cost ? "cost against days to train" : "GPU-hours against days to train";
    s.x_label = "days to train";
    s.y_label = cost ? "cost (USD)" : "GPU-hours";
    for (const auto& k : kept_)
      if (k.has_days) s.points.push_back({k.days, cost ? k.cost : k.gpu_hours, fmt::format("{}: {:.2f} days, {:.4g} {}", k.tip, k.days, cost ? k.cost : k.gpu_hours, s.y_label)});
    s.front = pareto_front_min_min(s.points);
    s.x_marker = marker_x_, s.x_marker_label = marker_label_;
    s.front_label = "Pareto front (no plan is both faster and cheaper)";
    return s;
  }
  if (config_columns_.empty()) return s;
  s.title = metric_ + " against " + config_columns_.front();
  s.x_label = config_columns_.front();
  s.y_label = metric_;
  std::map<std::string, double> category;  // non-numeric x values, in first-seen order
  bool numeric = std::all_of(kept_.begin(), kept_.end(), [](const Kept& k) { double v; return read_number(k.x_cell, &v); });
  for (const auto& k : kept_) {
    if (!k.has_metric) continue;
    double x = 0;
    if (numeric) read_number(k.x_cell, &x);
    else if (auto it = category.find(k.x_cell); it != category.end()) x = it->second;
    else x = double(s.x_categories.size()), category[k.x_cell] = x, s.x_categories.push_back(k.x_cell);
    s.points.push_back({x, k.metric, fmt::format("{}: {} {:.4g}", k.tip, metric_, k.metric)});
  }
  s.front = best_per_x(s.points, higher_is_better_);
  s.front_label = fmt::format("best {} per {}", metric_, config_columns_.front());
  return s;
}

void StudyHtml::add_table(const std::string& caption, const std::vector<std::vector<std::string>>& rows) {
  std::string o = fmt::format("<h2>{}</h2>\n", svg_escape(caption));
  if (rows.empty()) {
    tables_ += o + "<p class=\"note\">none</p>\n";
    return;
  }
  o += "<table class=\"best\"><tr><th>#</th>";
  // Headings without the section ("parallelism.tp" → "tp"); the full key is the hover text.
  for (const auto& c : config_columns_)
    o += fmt::format("<th class=\"l\" title=\"{}\">{}</th>", svg_escape_attribute(c), svg_escape(c.substr(c.rfind('.') + 1)));
  for (const auto& m : kMetrics)
    if (studies::column_of(header_, m.key)) o += fmt::format("<th>{}</th>", m.heading);
  o += "</tr>\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    o += fmt::format("<tr><td>{}</td>", i + 1);
    for (const auto& c : config_columns_) o += fmt::format("<td class=\"l\">{}</td>", svg_escape(cell_or_blank(header_, rows[i], c.c_str())));
    for (const auto& m : kMetrics) {
      if (!studies::column_of(header_, m.key)) continue;
      const std::string cell = cell_or_blank(header_, rows[i], m.key);
      double v = 0;
      o += read_number(cell, &v) ? fmt::format("<td data-key=\"{}\" data-value=\"{}\">{}</td>", m.key, svg_escape_attribute(cell), m.show(v))
                                 : fmt::format("<td data-key=\"{}\">{}</td>", m.key, svg_escape(cell));
    }
    o += "</tr>\n";
  }
  tables_ += o + "</table>\n";
}

std::string StudyHtml::render() const {
  std::string body = fmt::format("<h1>{}</h1>\n", svg_escape(title_));
  for (const auto& n : notes_) body += fmt::format("<p class=\"sub\">{}</p>\n", svg_escape(n));
  const ScatterSpec spec = chart();
  body += "<section id=\"scatter\"><h2>" + svg_escape(spec.title.empty() ? "chart" : spec.title) + "</h2>\n";
  body += spec.points.empty() ? "<p class=\"note\">No ok configuration to draw (a chart needs days to train, or a swept key "
                                "and the ranking metric).</p>\n"
                              : svg_inline(scatter_svg(spec)) +
                                    "<p class=\"note\">Hover a point for its configuration.</p>\n";
  body += "</section>\n<section id=\"best\">\n" + tables_ + "</section>\n";
  return html_page(title_ + " — clustersim", body);
}

}  // namespace clustersim::reporters
