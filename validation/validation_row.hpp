#pragma once
// Reading one published row (column name → cell): the helpers the dense and the MoE row
// converters share (validation/validation.cpp, validation/validation_moe.cpp).
#include <array>
#include <cctype>
#include <cstdlib>
#include <map>
#include <regex>
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
// The container release a cell names, {YY, MM, PP}: "Megatron-Bridge / NeMo 26.04.01 container"
// gives {26, 4, 1}, "26.02 NeMo Container pre-training table" {26, 2, 0}; all zero when it names none.
inline std::array<int, 3> container_release(const std::string& text) {
  static const std::regex release(R"((\d\d)\.(\d\d)(?:\.(\d\d))? (?:NeMo )?[Cc]ontainer)");
  std::smatch m;
  if (!std::regex_search(text, m, release)) return {0, 0, 0};
  return {std::stoi(m[1].str()), std::stoi(m[2].str()), m[3].matched ? std::stoi(m[3].str()) : 0};
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
