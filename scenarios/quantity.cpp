#include "scenarios/quantity.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

namespace clustersim::scenarios {
namespace {

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Splits "400Gb/s" into 400 and "Gb/s".
bool split_number(const std::string& s, double* value, std::string* unit) {
  std::size_t pos = 0;
  try {
    *value = std::stod(s, &pos);
  } catch (...) {
    return false;
  }
  *unit = trim(std::string_view(s).substr(pos));
  return std::isfinite(*value);
}

double decimal_prefix(char c) {
  switch (c) {
    case 'k': case 'K': return 1e3;
    case 'M': return 1e6;
    case 'G': return 1e9;
    case 'T': return 1e12;
    case 'P': return 1e15;
    case 'E': return 1e18;
    default: return 0.0;
  }
}

// Strips a leading SI (or, when `binary` allowed, IEC "Ki".."Pi") prefix from `u`.
double take_prefix(std::string* u, bool allow_binary) {
  if (allow_binary && u->size() >= 2 && (*u)[1] == 'i') {
    double p = 0;
    switch ((*u)[0]) {
      case 'K': p = 1024.0; break;
      case 'M': p = std::pow(1024.0, 2); break;
      case 'G': p = std::pow(1024.0, 3); break;
      case 'T': p = std::pow(1024.0, 4); break;
      case 'P': p = std::pow(1024.0, 5); break;
      default: break;
    }
    if (p > 0) {
      u->erase(0, 2);
      return p;
    }
  }
  if (u->size() >= 2) {
    double p = decimal_prefix((*u)[0]);
    if (p > 0) {
      u->erase(0, 1);
      return p;
    }
  }
  return 1.0;
}

std::optional<double> parse_bytes_unit(std::string u, bool per_second) {
  if (per_second) {
    if (u.size() >= 2 && u.substr(u.size() - 2) == "/s") u.resize(u.size() - 2);
    else if (u.size() >= 2 && u.substr(u.size() - 2) == "ps") u.resize(u.size() - 2);
    else return std::nullopt;
  }
  double prefix = take_prefix(&u, true);
  if (u == "B") return prefix;
  if (u == "b" || u == "bit") return prefix / 8.0;
  return std::nullopt;
}

}  // namespace

std::string describe(Dimension d) {
  switch (d) {
    case Dimension::count: return "a number such as 256, 1.5e12 or 15T";
    case Dimension::bytes: return "a size such as 80GiB or 50MB";
    case Dimension::bandwidth: return "a bandwidth such as 400Gb/s or 3.35TB/s";
    case Dimension::time: return "a duration such as 2.5us, 10ms or 1.5s";
    case Dimension::flop_rate: return "a rate such as 989TFLOP/s";
    case Dimension::frequency: return "a frequency such as 1830MHz";
  }
  return "a value";
}

std::optional<double> parse_quantity(std::string_view text, Dimension d, std::string* why) {
  const std::string s = trim(text);
  double v = 0;
  std::string unit;
  if (s.empty() || !split_number(s, &v, &unit)) {
    if (why) *why = "'" + s + "' is not " + describe(d);
    return std::nullopt;
  }
  std::optional<double> scale;
  if (unit.empty()) {
    scale = 1.0;
  } else {
    switch (d) {
      case Dimension::count:
        if (unit.size() == 1 && decimal_prefix(unit[0]) > 0) scale = decimal_prefix(unit[0]);
        else if (unit == "B") scale = 1e9;  // "7B" parameters
        break;
      case Dimension::bytes: scale = parse_bytes_unit(unit, false); break;
      case Dimension::bandwidth: scale = parse_bytes_unit(unit, true); break;
      case Dimension::time:
        if (unit == "s") scale = 1.0;
        else if (unit == "ms") scale = 1e-3;
        else if (unit == "us" || unit == "µs") scale = 1e-6;
        else if (unit == "ns") scale = 1e-9;
        else if (unit == "ps") scale = 1e-12;
        else if (unit == "min") scale = 60.0;
        else if (unit == "h") scale = 3600.0;
        else if (unit == "d" || unit == "days") scale = 86400.0;
        break;
      case Dimension::flop_rate: {
        std::string u = unit;
        for (const char* suffix : {"FLOP/s", "FLOPS", "flop/s", "flops"}) {
          std::string sfx(suffix);
          if (u.size() >= sfx.size() && u.substr(u.size() - sfx.size()) == sfx) {
            u.resize(u.size() - sfx.size());
            double p = u.empty() ? 1.0 : (u.size() == 1 ? decimal_prefix(u[0]) : 0.0);
            if (p > 0) scale = p;
            break;
          }
        }
        break;
      }
      case Dimension::frequency: {
        std::string u = unit;
        if (u.size() >= 2 && u.substr(u.size() - 2) == "Hz") {
          u.resize(u.size() - 2);
          double p = u.empty() ? 1.0 : (u.size() == 1 ? decimal_prefix(u[0]) : 0.0);
          if (p > 0) scale = p;
        }
        break;
      }
    }
  }
  if (!scale) {
    if (why) *why = "unit '" + unit + "' in '" + s + "' is not valid here; expected " + describe(d);
    return std::nullopt;
  }
  const double out = v * *scale;
  if (!std::isfinite(out)) {
    if (why) *why = "'" + s + "' is not a finite number";
    return std::nullopt;
  }
  return out;
}

}  // namespace clustersim::scenarios
