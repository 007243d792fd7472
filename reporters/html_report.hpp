#pragma once
// The self-contained HTML report of `run`, `sweep` and `plan` (--html): one file with inline
// CSS and SVG, no script and no URL, so it opens offline and can be mailed around.
#include <cstddef>
#include <string>
#include <vector>

#include "models/step.hpp"
#include "scenarios/explain.hpp"
#include "reporters/html_charts.hpp"

namespace clustersim::reporters {

/// A whole page: doctype, head with the stylesheet, `body` (already HTML).
std::string html_page(const std::string& title, const std::string& body);

/// `run --html`: the summary (with the text report, which lists the assumptions), the MFU
/// waterfall, memory by component and stage, the step timeline (from the kernel-level
/// `scenarios::simulate(sc, &timeline)`), the roofline of the top kernels and the advice.
std::string run_html(const scenarios::Report& r, const scenarios::Explanation& ex,
                     const std::vector<models::TimelineEntry>& timeline);

/// The page of a study (sweep or plan) over rows of the sweep table: fed row by row, it keeps
/// only what its chart needs. The chart is cost (or GPU-hours) against days with the Pareto
/// front when the ok rows have days, else the ranking metric against the first swept column
/// with the best value per column value.
class StudyHtml {
 public:
  StudyHtml(std::string title, std::vector<std::string> header, std::vector<std::string> config_columns,
            std::string metric, bool higher_is_better);
  void add_note(const std::string& text);
  /// A dashed vertical line on the cost-against-days chart (the plan's deadline).
  void mark_x(double days, const std::string& label);
  /// Every row may be offered; only rows with status "ok" are kept.
  void offer(const std::vector<std::string>& cells);
  /// A ranked table (best first) under `caption`.
  void add_table(const std::string& caption, const std::vector<std::vector<std::string>>& rows);
  /// The chart as it will be drawn (exposed for tests).
  ScatterSpec chart() const;
  std::string render() const;

 private:
  struct Kept {
    std::string x_cell, tip;
    double metric = 0, days = 0, gpu_hours = 0, cost = 0;
    bool has_metric = false, has_days = false, has_cost = false;
  };
  std::string title_;
  std::vector<std::string> header_, config_columns_, notes_;
  std::string metric_;
  bool higher_is_better_;
  double marker_x_ = 0;
  std::string marker_label_;
  std::vector<Kept> kept_;
  std::string tables_;
};

}  // namespace clustersim::reporters
