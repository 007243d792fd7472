// `run` lists the MoE defaults it assumed (issue 13 item 11 for the issue-15 keys): the dispatcher,
// the routing balance with the busiest rank's estimate, and the all-to-all overlap with the share
// of the step it leaves exposed; keys the scenario sets are not listed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "scenarios/assumptions.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

std::vector<scenarios::Assumption> assumed(const std::string& training_extra) {
  const std::string yaml =
      "model: qwen3-30b-a3b\nhardware: h100-sxm\ncluster: {gpus: 16}\nparallelism: {tp: 1, pp: 1, ep: 16, zero_stage: 1}\n"
      "training: {seq_len: 4096, global_batch: 64, micro_batch: 1" + training_extra + "}\n";
  return scenarios::assumptions(scenarios::simulate(scenarios::load_scenario_string(yaml)));
}

const scenarios::Assumption* find(const std::vector<scenarios::Assumption>& a, const std::string& key) {
  const auto it = std::find_if(a.begin(), a.end(), [&](const scenarios::Assumption& x) { return x.key == key; });
  return it == a.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("run lists the MoE dispatcher, routing balance and A2A overlap it assumed, and not the ones set", "[scenarios][moe]") {
  const auto plain = assumed("");
  const auto* d = find(plain, "training.moe_dispatcher");
  REQUIRE(d);
  CHECK(d->value == "alltoall");
  const auto* b = find(plain, "training.moe_load_imbalance");
  REQUIRE(b);
  CHECK(b->value == "auto");
  CHECK_THAT(b->why, Catch::Contains("the busiest EP rank gets 1."));
  const auto* o = find(plain, "training.moe_a2a_overlap");
  REQUIRE(o);
  CHECK(o->value == "false");
  CHECK_THAT(o->why, Catch::Contains("exposed EP communication is"));
  const auto set = assumed(", moe_dispatcher: deepep, moe_load_imbalance: 1.0, moe_a2a_overlap: true");
  for (const char* k : {"training.moe_dispatcher", "training.moe_load_imbalance", "training.moe_a2a_overlap"}) {
    INFO(k);
    CHECK_FALSE(find(set, k));
  }
}

}}  // namespace CLUSTERSIM_TEST_ID
