#pragma once
// Tagged SI quantities: bytes, seconds, FLOP and their quotients as distinct types, so that
// Bytes / Seconds is a BytesPerSecond and adding Bytes to Seconds does not compile. A leaf
// library (no project includes): every layer may use it. Bits never appear as a unit here:
// a link quoted in bit/s becomes BytesPerSecond through from_bits_per_second, once.
#include <compare>
#include <string_view>

namespace clustersim::units {

/// A value in SI base units whose dimension is bytes^B · seconds^S · FLOP^F.
template <int B, int S, int F>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double si) : v_(si) {}
  /// The value in SI base units (bytes, seconds, FLOP and their products).
  constexpr double si() const { return v_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(v_ + o.v_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(v_ - o.v_); }
  constexpr Quantity operator-() const { return Quantity(-v_); }
  constexpr Quantity& operator+=(Quantity o) { v_ += o.v_; return *this; }
  constexpr Quantity& operator-=(Quantity o) { v_ -= o.v_; return *this; }
  constexpr Quantity& operator*=(double k) { v_ *= k; return *this; }
  constexpr Quantity& operator/=(double k) { v_ /= k; return *this; }
  constexpr Quantity operator*(double k) const { return Quantity(v_ * k); }
  constexpr Quantity operator/(double k) const { return Quantity(v_ / k); }
  friend constexpr Quantity operator*(double k, Quantity q) { return Quantity(k * q.v_); }
  constexpr auto operator<=>(const Quantity&) const = default;

 private:
  double v_ = 0;
};

template <int B1, int S1, int F1, int B2, int S2, int F2>
constexpr auto operator*(Quantity<B1, S1, F1> a, Quantity<B2, S2, F2> b) {
  if constexpr (B1 + B2 == 0 && S1 + S2 == 0 && F1 + F2 == 0) return a.si() * b.si();
  else return Quantity<B1 + B2, S1 + S2, F1 + F2>(a.si() * b.si());
}
template <int B1, int S1, int F1, int B2, int S2, int F2>
constexpr auto operator/(Quantity<B1, S1, F1> a, Quantity<B2, S2, F2> b) {
  if constexpr (B1 == B2 && S1 == S2 && F1 == F2) return a.si() / b.si();  // a plain ratio
  else return Quantity<B1 - B2, S1 - S2, F1 - F2>(a.si() / b.si());
}

using Bytes = Quantity<1, 0, 0>;
using Seconds = Quantity<0, 1, 0>;
using Flop = Quantity<0, 0, 1>;
using BytesPerSecond = Quantity<1, -1, 0>;
using FlopPerSecond = Quantity<0, -1, 1>;

inline constexpr double kBitsPerByte = 8.0;
/// A rate quoted in bit/s (network links, "400 Gb/s") as bytes per second.
constexpr BytesPerSecond from_bits_per_second(double bits_per_s) { return BytesPerSecond(bits_per_s / kBitsPerByte); }
inline constexpr double kSecondsPerDay = 86400.0;
/// Memory is reported in GiB (2^30 bytes), never GB: what nvidia-smi and PyTorch's allocator print.
inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

/// The unit a reported number is in; the suffix its key carries.
enum class Unit { none, seconds, bytes, flop, bytes_per_s, flop_per_s, days, tokens, tokens_per_s, gpu_hours, usd };
constexpr std::string_view name(Unit u) {
  switch (u) {
    case Unit::none: return "";
    case Unit::seconds: return "s";
    case Unit::bytes: return "B";
    case Unit::flop: return "FLOP";
    case Unit::bytes_per_s: return "B/s";
    case Unit::flop_per_s: return "FLOP/s";
    case Unit::days: return "d";
    case Unit::tokens: return "tokens";
    case Unit::tokens_per_s: return "tokens/s";
    case Unit::gpu_hours: return "GPU-h";
    case Unit::usd: return "USD";
  }
  return "";
}

template <class Q> constexpr Unit unit_of();
template <> constexpr Unit unit_of<Seconds>() { return Unit::seconds; }
template <> constexpr Unit unit_of<Bytes>() { return Unit::bytes; }
template <> constexpr Unit unit_of<Flop>() { return Unit::flop; }
template <> constexpr Unit unit_of<BytesPerSecond>() { return Unit::bytes_per_s; }
template <> constexpr Unit unit_of<FlopPerSecond>() { return Unit::flop_per_s; }

}  // namespace clustersim::units
