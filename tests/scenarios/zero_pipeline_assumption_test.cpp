// Issue 31 item 3: with pipeline parallelism ZeRO-2 and ZeRO-3 give ZeRO-1's memory (PyTorch
// pipelining keeps gradients unsharded until the last micro-batch, torchtitan keeps gathered
// parameters across micro-batches). That is the stack's behaviour, and the report says so.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "scenarios/assumptions.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {
const scenarios::Assumption* zero_line(const std::vector<scenarios::Assumption>& a) {
  auto it = std::find_if(a.begin(), a.end(), [](const scenarios::Assumption& x) { return x.key == "parallelism.zero_stage"; });
  return it == a.end() ? nullptr : &*it;
}
}  // namespace

TEST_CASE("ZeRO-2/3 under pipeline parallelism: ZeRO-1's memory, and the report says why", "[scenarios][memory]") {
  const auto z1 = testing::run_main_scenario({"parallelism.pp=4", "parallelism.zero_stage=1", "parallelism.dp=64"});
  const auto z3 = testing::run_main_scenario({"parallelism.pp=4", "parallelism.zero_stage=3", "parallelism.dp=64"});
  CHECK(z3.memory.total_bytes == Approx(z1.memory.total_bytes).epsilon(1e-9));
  const auto listed = scenarios::assumptions(z3);
  const auto* line = zero_line(listed);
  REQUIRE(line != nullptr);
  CHECK(line->why.find("no_sync") != std::string::npos);
  CHECK(zero_line(scenarios::assumptions(z1)) == nullptr);
  // Without pipeline parallelism ZeRO-3 shards and the line is not given.
  const auto flat = testing::run_main_scenario({"parallelism.zero_stage=3"});
  CHECK(zero_line(scenarios::assumptions(flat)) == nullptr);
}

}}  // namespace CLUSTERSIM_TEST_ID
