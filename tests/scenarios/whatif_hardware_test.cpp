// Issue #16 "what-if on the shipped scenarios": a value the loader derives (the node size from
// the hardware's default topology, dp from the GPU count) is derived again when a swept key
// changes what it derives from, because no shipped scenario pins it.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "scenarios/load.hpp"
#include "scenarios/topology_load.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {
scenarios::Scenario flagship(const std::vector<std::string>& sets) {
  return scenarios::load_scenario_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/7b_256xh100.yaml", sets);
}
}  // namespace

TEST_CASE("the flagship scenario takes its node size from the hardware it is switched to", "[scenarios][whatif]") {
  // DGX H100 and DGX B200 are 8-GPU nodes; a GB200 NVL72 rack is one 72-GPU NVLink domain, of which
  // a 256-GPU job gets 64 GPUs (SLURM segments of 16 of its 18 trays: scenarios::nvl_segment_gpus).
  CHECK(flagship({}).cluster.gpus_per_node == 8);
  CHECK(flagship({"hardware=b200"}).cluster.gpus_per_node == 8);
  const auto gb200 = flagship({"hardware=gb200"});
  CHECK(gb200.cluster.gpus_per_node == 64);
  CHECK(gb200.network.topology.gpus_per_node == 64);
  CHECK(gb200.cluster.segment_assumed);
  // A node size the user sets still wins.
  const auto packed = flagship({"hardware=gb200", "cluster.gpus_per_node=72"});
  CHECK(packed.cluster.gpus_per_node == 72);
  CHECK_FALSE(packed.cluster.segment_assumed);
}

TEST_CASE("the flagship scenario's dp follows the GPU count", "[scenarios][whatif]") {
  CHECK(flagship({}).parallel.dp == 256);
  CHECK(flagship({"cluster.gpus=512"}).parallel.dp == 512);
  CHECK(flagship({"cluster.gpus=64", "parallelism.tp=2"}).parallel.dp == 32);
}

TEST_CASE("an NVL72 job gets the racks NVIDIA's launchers give it: the largest tray divisor up to 18 per rack", "[scenarios][whatif]") {
  const topologies::TopologySpec nvl = scenarios::topology_preset("gb200-nvl72");
  // GPUs → GPUs per NVLink domain (Megatron-Bridge executors.py --segment, in 4-GPU trays).
  const std::vector<std::pair<int, int>> cases = {{4, 4},     {8, 8},     {64, 64},   {72, 72},  {128, 64},
                                                  {144, 72}, {256, 64}, {512, 64}, {576, 72}, {1000, 40}};
  for (const auto& [gpus, expected] : cases) {
    INFO(gpus << " GPUs");
    CHECK(scenarios::nvl_segment_gpus(nvl, gpus) == expected);
  }
  CHECK(scenarios::nvl_segment_gpus(nvl, 6) == 72);  // not whole trays: the rack as it is
  CHECK(scenarios::nvl_segment_gpus(scenarios::topology_preset("dgx-h100"), 256) == 8);  // not a rack-scale domain
}

}}  // namespace CLUSTERSIM_TEST_ID
