// Issue #16 "what-if on the shipped scenarios": a value the loader derives (the node size from
// the hardware's default topology, dp from the GPU count) is derived again when a swept key
// changes what it derives from, because no shipped scenario pins it.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "scenarios/load.hpp"

using namespace clustersim;

namespace {
scenarios::Scenario flagship(const std::vector<std::string>& sets) {
  return scenarios::load_scenario_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/7b_256xh100.yaml", sets);
}
}  // namespace

TEST_CASE("the flagship scenario takes its node size from the hardware it is switched to", "[scenarios][whatif]") {
  // DGX H100 and DGX B200 are 8-GPU nodes; a GB200 NVL72 rack is one 72-GPU NVLink domain.
  CHECK(flagship({}).cluster.gpus_per_node == 8);
  CHECK(flagship({"hardware=b200"}).cluster.gpus_per_node == 8);
  const auto gb200 = flagship({"hardware=gb200"});
  CHECK(gb200.cluster.gpus_per_node == 72);
  CHECK(gb200.network.topology.gpus_per_node == 72);
  // A node size the user sets still wins (whole 4-GPU trays of the rack).
  CHECK(flagship({"hardware=gb200", "cluster.gpus_per_node=64"}).cluster.gpus_per_node == 64);
}

TEST_CASE("the flagship scenario's dp follows the GPU count", "[scenarios][whatif]") {
  CHECK(flagship({}).parallel.dp == 256);
  CHECK(flagship({"cluster.gpus=512"}).parallel.dp == 512);
  CHECK(flagship({"cluster.gpus=64", "parallelism.tp=2"}).parallel.dp == 32);
}
