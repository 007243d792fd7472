#include <catch2/catch.hpp>

#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

// The MI355X profile's peaks follow from its CU count and clock (256 CU x 2.4 GHz x 4096 BF16 /
// 8192 FP8 FLOP per clock per CU, CDNA 4); it runs on its own xGMI full-mesh platform.
TEST_CASE("mi355x: peaks from CUs x clock, 288 GiB, its own full-mesh node", "[hardware][amd]") {
  const auto sc = scenarios::load_scenario_string(
      "model: llama3-8b\nhardware: mi355x\ncluster:\n  gpus: 16\n"
      "training:\n  seq_len: 8192\n  global_batch: 32\n  micro_batch: 1\n");
  CHECK(sc.gpu.sms == 256);
  CHECK(sc.gpu.peak(hardware::Precision::bf16).si() == Approx(256 * 2.4e9 * 4096).epsilon(1e-4));
  CHECK(sc.gpu.peak(hardware::Precision::fp8).si() == Approx(256 * 2.4e9 * 8192).epsilon(1e-4));
  CHECK(sc.gpu.hbm_capacity.si() == 288.0 * 1024 * 1024 * 1024);
  CHECK(sc.gpu.hbm_bandwidth.si() == 8e12);
  CHECK(sc.network.topology.name == "mi355x");
  CHECK(sc.network.differs_from_default.empty());
  // Faster than the MI325X on the same job (twice the matrix peak, faster HBM and links).
  const auto mi325 = scenarios::load_scenario_string(
      "model: llama3-8b\nhardware: mi325x\ncluster:\n  gpus: 16\n"
      "training:\n  seq_len: 8192\n  global_batch: 32\n  micro_batch: 1\n");
  CHECK(scenarios::simulate(sc).step_time_s < scenarios::simulate(mi325).step_time_s);
}

}}  // namespace CLUSTERSIM_TEST_ID
