#pragma once
// Inline SVG charts of the HTML report (tools/html_report.hpp): memory per stage, the step
// timeline and a scatter with a highlighted front. Hover text is SVG <title>, so no script.
#include <cstddef>
#include <string>
#include <vector>

#include "models/memory.hpp"
#include "models/step.hpp"

namespace clustersim::reporters {

/// One stacked bar per pipeline stage (weights, gradients, optimizer, activations, logits,
/// reserved) against the GPU's capacity, in GiB.
std::string memory_chart_svg(const std::vector<models::MemoryEstimate>& stages);

/// One row per (stage, stream); tasks of one kind closer than half a pixel merge into one bar,
/// so the chart stays a few thousand shapes whatever the kernel count.
std::string timeline_svg(const std::vector<models::TimelineEntry>& timeline);

struct ScatterPoint {
  double x = 0, y = 0;
  std::string tip;  ///< hover text
};

struct ScatterSpec {
  std::string title, x_label, y_label;
  std::vector<ScatterPoint> points;
  std::vector<std::string> x_categories;  ///< non-empty: x is an index into these labels
  std::vector<std::size_t> front;         ///< indices into points, joined in x order
  std::string front_label;                ///< legend text of the front
  double x_marker = 0;                    ///< a dashed vertical line (e.g. the deadline) when labelled
  std::string x_marker_label;
};

std::string scatter_svg(const ScatterSpec& spec);

/// Points no other point beats on both coordinates (lower is better on both), by increasing x.
std::vector<std::size_t> pareto_front_min_min(const std::vector<ScatterPoint>& points);
/// The best point of each x value (highest y when `higher_is_better`), by increasing x.
std::vector<std::size_t> best_per_x(const std::vector<ScatterPoint>& points, bool higher_is_better);

}  // namespace clustersim::reporters
