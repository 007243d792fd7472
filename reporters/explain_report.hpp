#pragma once
// Renders an Explanation: terminal text, a JSON member, and a standalone SVG waterfall chart.
#include <string>

#include "scenarios/explain.hpp"
#include "studies/json_value.hpp"

namespace clustersim::reporters {

std::string format_explain_text(const scenarios::Explanation& ex, const scenarios::Report& r, int top_ops = 10);
/// The value of the `explain` key in `run --json` (a JSON object).
studies::Json format_explain_json(const scenarios::Explanation& ex, const scenarios::Report& r);
/// A waterfall from 100 % of peak down to the achieved MFU, one bar per cause.
std::string waterfall_svg(const scenarios::Explanation& ex, const scenarios::Report& r);

}  // namespace clustersim::reporters
