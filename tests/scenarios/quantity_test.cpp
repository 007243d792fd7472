#include <catch2/catch.hpp>

#include "scenarios/quantity.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::scenarios;

TEST_CASE("quantities parse with decimal and binary prefixes, bits and bytes", "[sim]") {
  std::string why;
  REQUIRE(*parse_quantity("400Gb/s", Dimension::bandwidth, &why) == Approx(50e9));
  REQUIRE(*parse_quantity("3.35 TB/s", Dimension::bandwidth, &why) == Approx(3.35e12));
  REQUIRE(*parse_quantity("80 GiB", Dimension::bytes, &why) == Approx(80.0 * 1024 * 1024 * 1024));
  REQUIRE(*parse_quantity("50MB", Dimension::bytes, &why) == Approx(50e6));
  REQUIRE(*parse_quantity("2.5 us", Dimension::time, &why) == Approx(2.5e-6));
  REQUIRE(*parse_quantity("989.4 TFLOP/s", Dimension::flop_rate, &why) == Approx(989.4e12));
  REQUIRE(*parse_quantity("15T", Dimension::count, &why) == Approx(15e12));
  REQUIRE(*parse_quantity("1.0e12", Dimension::count, &why) == Approx(1e12));
}

TEST_CASE("wrong units are rejected with a reason", "[sim]") {
  std::string why;
  REQUIRE_FALSE(parse_quantity("80 GB/s", Dimension::bytes, &why));
  REQUIRE(why.find("GB/s") != std::string::npos);
  REQUIRE_FALSE(parse_quantity("fast", Dimension::bandwidth, &why));
  REQUIRE_FALSE(parse_quantity("nan", Dimension::count, &why));
}

}}  // namespace CLUSTERSIM_TEST_ID
