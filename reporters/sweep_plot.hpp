#pragma once
// A standalone SVG chart of a sweep: the ranking metric against one swept key, every ok
// configuration as a point and the best per key value joined by a line.
#include <string>
#include <utility>
#include <vector>

namespace clustersim::reporters {

struct SweepPoint {
  std::string x;  ///< the swept key's value as written (numeric values get a numeric axis)
  double y = 0;
};

/// `metric` is the y values' key (mfu and hfu are drawn in %); `higher_is_better` picks the
/// per-x best for the line (MFU: max; step time, days, cost: min). The chart has a title
/// (`title`, or "METRIC by X"), a legend and y ticks at round steps (1, 2, 5 x 10^k).
std::string sweep_plot_svg(const std::vector<SweepPoint>& points, const std::string& x_label, const std::string& metric,
                           bool higher_is_better, const std::string& title = "");

}  // namespace clustersim::reporters
