#pragma once
// Parsing of dimensioned values as users write them ("400Gb/s", "80 GiB", "2.5 us",
// "989 TFLOP/s", "15T"). Decimal prefixes are powers of 10 (GB = 1e9 B), binary prefixes powers
// of 2 (GiB = 2^30 B); `b` is a bit, `B` a byte. Everything is returned in SI base units
// (bandwidths in bytes/s). Part of the loader: the simulator core never parses text.
#include <optional>
#include <string>
#include <string_view>

namespace clustersim::scenarios {

enum class Dimension { count, bytes, bandwidth, time, flop_rate, frequency };

/// Name of a dimension with an example, for error messages ("a bandwidth such as 400Gb/s").
std::string describe(Dimension d);

/// Parses `text` as a value of dimension `d`. Bare numbers are accepted for `count` and
/// (as SI base units) for every other dimension, since YAML often carries plain numbers.
/// Returns std::nullopt and sets `why` on failure.
std::optional<double> parse_quantity(std::string_view text, Dimension d, std::string* why);

}  // namespace clustersim::scenarios
