#pragma once
// A number as a table cell (the sweep's and plan's CSV, and the rows they rank): fixed text, so
// output is byte-identical run to run. A value that is not finite is "null", as in the JSON the
// same rows are written to (studies/json_value.hpp, which keeps the same digits). A whole number
// (a count of parameters, bytes, tokens) is an exact integer, never rounded to 10 digits
// (7.05537065e+10 lost the parameter count).
#include <fmt/format.h>

#include <cmath>
#include <string>

namespace clustersim::studies {

/// A finite whole number a double holds exactly (below 2^53): written as an integer.
inline bool exact_integer(double v) { return v == std::floor(v) && std::fabs(v) < 9007199254740992.0; }

inline std::string number_cell(double v) {
  if (!std::isfinite(v)) return "null";
  if (exact_integer(v)) return fmt::format("{:.0f}", v + 0.0);  // + 0.0: no "-0"
  return fmt::format("{:.10g}", v);
}
/// A count of bytes: a whole number (a model's fractional bytes rounded to the nearest byte).
inline std::string bytes_cell(double v) { return std::isfinite(v) ? number_cell(std::round(v)) : "null"; }

}  // namespace clustersim::studies
