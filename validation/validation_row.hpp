#pragma once
// Reading one published row (column name → cell): the helpers the dense and the MoE row
// converters share (validation/validation.cpp, validation/validation_moe.cpp).
#include <cctype>
#include <cstdlib>
#include <map>
#include <string>

namespace clustersim::studies::row_cells {

using Row = std::map<std::string, std::string>;

inline std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
inline bool contains(const std::string& hay, const std::string& needle) {
  return lower(hay).find(lower(needle)) != std::string::npos;
}
inline std::string field(const Row& r, const std::string& k) {
  auto it = r.find(k);
  return it == r.end() ? std::string() : it->second;
}
// A whole positive number, or 0 when blank or not a number.
inline long integer(const Row& r, const std::string& k) {
  const std::string s = field(r, k);
  if (s.empty()) return 0;
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  return (end && *end == '\0' && v > 0) ? v : 0;
}
inline double number(const Row& r, const std::string& k) {
  const std::string s = field(r, k);
  if (s.empty()) return 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  return (end && *end == '\0') ? v : 0;
}
// A published precision cell as its class: nvfp4, mxfp8, fp8-blockwise, fp8 or bf16 (the notes a
// row adds in parentheses, "fp8 (FP8 per 26.02 table)", do not make another precision).
inline std::string precision_class(const std::string& p) {
  if (contains(p, "nvfp4")) return "nvfp4";
  if (contains(p, "mxfp8")) return "mxfp8";
  if (contains(p, "fp8")) return contains(p, "blockwise") ? "fp8-blockwise" : "fp8";
  return "bf16";
}
inline std::string yaml_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace clustersim::studies::row_cells
