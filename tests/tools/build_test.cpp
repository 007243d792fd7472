#include <catch2/catch.hpp>

#include <cassert>
#include <string>

#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

TEST_CASE("the tested build keeps assertions on", "[tools][build]") {
#ifdef NDEBUG
  FAIL("NDEBUG is defined: CI would test a build without assertions (CLUSTERSIM_ASSERTS=OFF?)");
#else
  SUCCEED("assert() is active");
#endif
}

TEST_CASE("clustersim --version names the program and its version", "[tools][cli]") {
  const auto r = clustersim::testing::run_command(std::string("\"") + CLUSTERSIM_BINARY + "\" --version");
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("clustersim ") && Catch::Contains("."));
}

}}  // namespace CLUSTERSIM_TEST_ID
