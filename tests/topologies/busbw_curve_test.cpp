// The network model against measured nccl-tests all-reduce curves, message size by message size
// (topologies/measured/nccl_busbw.csv, the project's reference measurements: docs/reference/SOURCES.md).
// The other reference tests check the large-message plateau and the small-message latency; this
// one checks the ramp between them, where TP all-reduces, DP buckets and FSDP gathers live.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "scenarios/topology_load.hpp"
#include "studies/csv_table.hpp"
#include "support/network_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

struct Curve {
  const char* system;  // the CSV's `system`
  const char* preset;  // the topology the model runs
  int gpus;
};

// One node each: the AWS P6-B200 multi-node rows run EFA through AWS's OFI plugin, a fabric no
// preset models (dgx-b200 is InfiniBand), so only its single-node NVLink curve is compared.
constexpr Curve kCurves[] = {
    {"DGX/HGX A100 node", "dgx-a100", 8},
    {"8x H200 node", "dgx-h100", 8},  // HGX H200: NVLink 4 and NVSwitch 3, as DGX H100
    {"AWS P6-B200 (8x B200 per node)", "dgx-b200", 8},
};

// Sizes (bytes) where the model is more than 15 % off, by curve. All are faster than measured:
// the model is NCCL's tuning.cc cost (latency + bytes / bandwidth), which has no pipeline fill —
// a ring step moves one chunk per channel, so the 2(k−1) steps of a ring start and end part
// empty, and messages of a few chunks per channel never reach the plateau (tests/validation/
// VALIDATION.md, "Collective sizes between latency and plateau"). A listed size that comes
// within 15 % fails too, so the list cannot go stale.
const std::map<std::string, std::set<double>> kKnownMisses = {
    {"DGX/HGX A100 node", {1048576, 2097152, 16777216, 33554432, 67108864, 134217728, 268435456}},
    {"8x H200 node", {16777216, 33554432}},
    {"AWS P6-B200 (8x B200 per node)",
     {4194304, 8388608, 16777216, 33554432, 67108864, 134217728, 268435456, 536870912}},
};

bool default_algorithm(const std::string& algo) {
  return algo.rfind("RING/LL", 0) == 0 || algo.rfind("NCCL default", 0) == 0;  // not a forced ring or NVLS row
}

}  // namespace

TEST_CASE("all-reduce busbw from 1 MiB up follows the measured nccl-tests curves, misses listed", "[topologies][reference]") {
  const studies::CsvTable t = studies::read_csv_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/topologies/measured/nccl_busbw.csv");
  int compared = 0, within = 0;
  for (const Curve& c : kCurves) {
    const topologies::TopologySpec spec = scenarios::topology_preset(c.preset);
    REQUIRE(spec.gpus_per_node == c.gpus);
    const auto net = testing::whole_cluster(spec, 1);
    const std::set<double>& misses = kKnownMisses.at(c.system);
    int rows = 0;
    for (const auto& r : t.rows) {
      if (r.at("collective") != "all_reduce" || r.at("system") != c.system || r.at("n_gpus") != std::to_string(c.gpus) ||
          !default_algorithm(r.at("algo")))
        continue;
      const double bytes = std::stod(r.at("msg_bytes")), measured = std::stod(r.at("busbw_GBps")) * 1e9;
      if (bytes < 1048576) continue;  // below: the latency test's range
      ++rows;
      const double model = testing::busbw(net, topologies::Collective::all_reduce, bytes);
      const double err = model / measured - 1;
      INFO(c.system << " " << bytes << " B: model " << model / 1e9 << " GB/s, measured " << measured / 1e9 << " ("
                    << 100 * err << " %)");
      ++compared;
      if (misses.count(bytes)) {
        CHECK(err > 0.15);  // a known miss: the model is faster than measured
      } else {
        CHECK(std::abs(err) <= 0.15);
        ++within;
      }
    }
    CHECK(rows >= 15);  // every size from 1 MiB to 16 GiB
  }
  INFO(within << " of " << compared << " sizes within 15 %");
  CHECK(compared == 45);
}

}}  // namespace CLUSTERSIM_TEST_ID
