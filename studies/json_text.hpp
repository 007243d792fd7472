#pragma once
// The JSON text helpers every reporter shares: a quoted, escaped string and a number that is
// null when not finite (JSON has no NaN or infinity). Fixed formatting keeps output
// byte-identical run to run.
#include <fmt/format.h>

#include <cmath>
#include <string>

namespace clustersim::studies {

inline std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", int(c));
    else out += c;
  }
  return out + "\"";
}

inline std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{:.10g}", v) : "null"; }

}  // namespace clustersim::studies
