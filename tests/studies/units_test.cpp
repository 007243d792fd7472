#include <catch2/catch.hpp>

#include <type_traits>

#include "units/units.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::units;

TEST_CASE("tagged quantities: the arithmetic that makes sense, with the right types", "[units]") {
  const Bytes b(50e9);
  const Seconds s(2.0);
  const auto rate = b / s;
  static_assert(std::is_same_v<decltype(rate), const BytesPerSecond>);
  CHECK(rate.si() == 25e9);
  static_assert(std::is_same_v<decltype(rate * s), Bytes>);
  CHECK((rate * s).si() == 50e9);
  static_assert(std::is_same_v<decltype(Flop(1e12) / Seconds(1)), FlopPerSecond>);
  static_assert(std::is_same_v<decltype(b / Bytes(1)), double>);  // a ratio is a plain number
  CHECK(b / Bytes(25e9) == 2.0);
  CHECK((Seconds(1) + Seconds(2)).si() == 3.0);
  CHECK(Seconds(1) < Seconds(2));
  Seconds t(3.0);
  t *= 4;  // scaling by a plain number keeps the unit
  t /= 8;
  CHECK(t.si() == 1.5);
  // Bytes + Seconds does not compile: no operator+ between different tags.
  static_assert(!std::is_invocable_v<std::plus<>, Bytes, Seconds>);
}

TEST_CASE("a link quoted in bits per second becomes bytes per second once", "[units]") {
  CHECK(from_bits_per_second(400e9).si() == 50e9);  // 400 Gb/s NDR InfiniBand = 50 GB/s
  CHECK(name(Unit::bytes_per_s) == "B/s");
}

}}  // namespace CLUSTERSIM_TEST_ID
