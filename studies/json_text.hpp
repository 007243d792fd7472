#pragma once
// The JSON text helpers every reporter shares: a quoted, escaped string and a number that is
// null when not finite (JSON has no NaN or infinity). Fixed formatting keeps output
// byte-identical run to run; a whole number (a count of parameters, bytes, tokens) is written
// as an exact integer, never rounded to 10 digits (7.05537065e+10 lost the parameter count).
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

inline std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == std::floor(v) && std::fabs(v) < 9007199254740992.0) return fmt::format("{:.0f}", v + 0.0);  // + 0.0: no "-0"
  return fmt::format("{:.10g}", v);
}
/// A count of bytes: a whole number (a model's fractional bytes, e.g. activations per micro-batch
/// share, rounded to the nearest byte).
inline std::string json_bytes(double v) { return std::isfinite(v) ? json_number(std::round(v)) : "null"; }

}  // namespace clustersim::studies
