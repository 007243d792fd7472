#pragma once
// One unit convention: SI base units everywhere (seconds, bytes, FLOP, bytes/s, FLOP/s).
// Simulated time is an integer count of picoseconds so that event ordering is exact and
// results are byte-identical run to run; everything else is a double in SI units whose
// variable names carry the unit (`_s`, `_bytes`, `_flop`, `_bps`, `_flops`).
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

namespace clustersim::sim {

/// Simulated time: int64 picoseconds (±106 days of range).
class Time {
 public:
  constexpr Time() = default;
  static constexpr Time from_ps(std::int64_t ps) { return Time(ps); }
  /// The one double → Time conversion; rounds to the nearest picosecond.
  static Time from_seconds(double s) { return Time(static_cast<std::int64_t>(std::llround(s * 1e12))); }
  static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }

  constexpr std::int64_t ps() const { return ps_; }
  constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }

  constexpr Time operator+(Time o) const { return Time(ps_ + o.ps_); }
  constexpr Time operator-(Time o) const { return Time(ps_ - o.ps_); }
  constexpr Time& operator+=(Time o) { ps_ += o.ps_; return *this; }
  constexpr auto operator<=>(const Time&) const = default;

 private:
  constexpr explicit Time(std::int64_t ps) : ps_(ps) {}
  std::int64_t ps_ = 0;
};

inline constexpr double kBitsPerByte = 8.0;

}  // namespace clustersim::sim
