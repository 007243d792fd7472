#include "studies/json_value.hpp"

#include <fmt/format.h>

#include "studies/cell_text.hpp"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace clustersim::studies {

Json json_number_value(double v, int significant_digits) {
  if (!std::isfinite(v)) return nullptr;
  if (exact_integer(v)) return static_cast<std::int64_t>(v);
  const double rounded = std::strtod(fmt::format("{:.{}g}", v, significant_digits).c_str(), nullptr);
  if (exact_integer(rounded)) return static_cast<std::int64_t>(rounded);
  return rounded;
}

Json json_bytes_value(double v) { return std::isfinite(v) ? json_number_value(std::round(v)) : Json(nullptr); }

Json json_cell_value(const std::string& cell) {
  if (cell.empty()) return nullptr;
  if (std::isspace(static_cast<unsigned char>(cell.front())) || std::isspace(static_cast<unsigned char>(cell.back())))
    return cell;  // the parser would skip the blanks; the cell is text
  const Json n = Json::parse(cell, nullptr, false);
  if (n.is_number_float()) return json_number_value(n.get<double>());
  if (n.is_number()) return n;
  return cell;
}

std::string json_string(const std::string& text) { return json_dump(Json(text), false); }

std::string json_dump(const Json& j, bool pretty) {
  return j.dump(pretty ? 2 : -1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace clustersim::studies
