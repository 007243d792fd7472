#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <memory>
#include <string>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"
#include "scenarios/topology_load.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::scenarios;

namespace {

const std::string kBase = R"(
name: t
model: llama2-7b
hardware: h100-sxm
cluster: {gpus: 256}
parallelism: {dp: 256, zero_stage: 1}
training: {seq_len: 4096, global_batch: 1024}
)";

std::string run(const std::string& cmd, int* status) {
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen((cmd + " 2>&1").c_str(), "r"), pclose);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p.get())) out += buf.data();
  *status = pclose(p.release());
  return out;
}

}  // namespace

TEST_CASE("every shipped topology loads", "[scenarios][network]") {
  for (const auto& name : topology_names()) {
    INFO(name);
    const auto t = topology_preset(name);
    CHECK(t.name == name);
  }
  CHECK(topology_names().size() >= 4);
}

TEST_CASE("the scenario's network section selects the topology", "[scenarios][network]") {
  // Without a network section: the hardware profile's default topology (h100-sxm: dgx-h100).
  const Scenario plain = load_scenario_string(kBase);
  CHECK(plain.network.topology == topology_preset("dgx-h100"));
  const Scenario h100 = load_scenario_string(kBase, "<s>", {"network.topology=dgx-h100"});
  CHECK(h100.network.topology.name == "dgx-h100");
  CHECK(load_scenario_string(kBase, "<s>", {"cluster.topology=h100-pcie-ethernet"}).network.topology.name ==
        "h100-pcie-ethernet");
  // A GPU in a machine of another size is another product: the profile and the topology disagree.
  CHECK_THROWS_WITH(load_scenario_string(kBase, "<s>", {"cluster.topology=gb200-nvl72"}),
                    Catch::Contains("cluster.topology") && Catch::Contains("72 GPUs per node") &&
                        Catch::Contains("nodes of 8"));
  // cluster.gpus_per_node reshapes the default topology, keeping its NICs per GPU.
  const Scenario four = load_scenario_string(kBase, "<s>", {"cluster.gpus_per_node=4"});
  CHECK(four.network.topology.gpus_per_node == 4);
  CHECK(four.network.topology.nics_per_node == 4);
  // network.node / network.fabric override the named topology's link rates.
  const Scenario fast = load_scenario_string(kBase, "<s>", {"network.node.nic_bandwidth=800Gb/s", "network.fabric.oversubscription=3"});
  CHECK(fast.network.topology.nic_bandwidth.si() == Approx(100e9));
  CHECK(fast.network.topology.oversubscription == 3.0);
  CHECK_THROWS_WITH(load_scenario_string(kBase, "<s>", {"network.topology=h100-pcie-ethernet", "network.node.nvlink_bandwidth=900GB/s"}),
                    Catch::Contains("network.node.nvlink_bandwidth"));
  CHECK_THROWS_WITH(load_scenario_string(kBase, "<s>", {"network.node.kind=pcie"}), Catch::Contains("network.node.kind"));
  // A GPU in another machine is a what-if the scenario states: SXM GPUs in PCIe boxes.
  CHECK(h100.network.differs_from_default.empty());
  CHECK_THAT(load_scenario_string(kBase, "<s>", {"network.topology=h100-pcie-ethernet"}).network.differs_from_default,
             Catch::Contains("dgx-h100") && Catch::Contains("pcie"));
  // Link rates in a hardware profile are refused with where they live now.
  CHECK_THROWS_WITH(load_scenario_string(kBase, "<s>", {"hardware.node.nic_bandwidth=800Gb/s"}),
                    Catch::Contains("hardware.node.nic_bandwidth") && Catch::Contains("network.node.nic_bandwidth"));
  CHECK_THROWS_WITH(load_scenario_string(kBase, "<s>", {"cluster.topology=dgx-a100", "network.topology=dgx-h100"}),
                    Catch::Contains("cluster.topology"));
  const Scenario eth = load_scenario_string(kBase, "<s>", {"network.topology=h100-pcie-ethernet", "network.algorithm=ring"});
  CHECK(eth.network.topology.oversubscription == 2.0);
  CHECK(eth.network.algorithm == clustersim::topologies::AlgorithmChoice::ring);
  using clustersim::topologies::GroupDim;
  const Scenario placed = load_scenario_string(kBase, "<s>", {"network.placement=[dp, tp, cp, pp]"});
  CHECK(placed.network.placement == clustersim::topologies::PlacementOrder{GroupDim::dp, GroupDim::tp, GroupDim::cp, GroupDim::pp});
  CHECK_THROWS_WITH(load_scenario_string(kBase, "<s>", {"network.placement=tp,tp,pp,dp"}), Catch::Contains("network.placement"));
}

TEST_CASE("swapping in an oversubscribed Ethernet fabric exposes DP communication", "[scenarios][network]") {
  const Report ib = simulate(load_scenario_string(kBase, "<s>", {"network.topology=dgx-h100"}));
  const Report eth = simulate(load_scenario_string(kBase, "<s>", {"network.topology=h100-pcie-ethernet"}));
  CHECK(eth.step.breakdown.comm_exposed[clustersim::models::Channel::dp] > 10 * ib.step.breakdown.comm_exposed[clustersim::models::Channel::dp]);
  CHECK(eth.step_time_s > ib.step_time_s);
}

TEST_CASE("bad network input is a one-line error naming the key", "[scenarios][network]") {
  CHECK_THROWS_WITH(load_scenario_string(kBase, "<s>", {"network.topology=dgx-h10"}),
                    Catch::Contains("network.topology") && Catch::Contains("did you mean 'dgx-h100'"));
  CHECK_THROWS_WITH(load_scenario_string(kBase, "<s>", {"network.algorithm=collnet"}), Catch::Contains("network.algorithm"));
  CHECK_THROWS_WITH(load_scenario_string(kBase, "<s>", {"network.topology=gb200-nvl72", "cluster.gpus_per_node=8"}),
                    Catch::Contains("cluster.gpus_per_node"));
  CHECK_THROWS_WITH(parse_topology("name: x\nnode: {kind: nvswitch, gpus: 8, nvlink_bandwidth: 0 GB/s, pcie_bandwidth: 63GB/s, nic_bandwidth: 400Gb/s}\n", "x.yaml"),
                    Catch::Contains("x.yaml") && Catch::Contains("node.nvlink_bandwidth"));
  CHECK_THROWS_WITH(parse_topology("name: x\nnode: {kind: nvswitch, gpus: 8, nvlink_bandwidth: 450GB/s, pcie_bandwidth: 63GB/s, nic_bandwidth: 400Gb/s, nics_per_node: 16}\n", "x.yaml"),
                    Catch::Contains("node.nics_per_node"));
  CHECK_THROWS_WITH(parse_topology("name: x\nnode: {kind: torus, gpus: 8}\n", "x.yaml"), Catch::Contains("node.kind"));
  CHECK_THROWS_WITH(parse_topology("name: x\nnode: {kind: pcie, gpus: 8, pcie_bandwidth: 63GB/s, nic_bandwidth: 100Gb/s}\nfabric: {oversubscription: 0.5}\n", "x.yaml"),
                    Catch::Contains("fabric.oversubscription"));
}

TEST_CASE("clustersim collective prints nccl-tests rows", "[tools][network]") {
  int status = 0;
  const std::string json = run(std::string(CLUSTERSIM_BINARY) +
                                   " collective --topology dgx-h100 --nodes 2 --op all_reduce --sizes 1MB..4MB --json",
                               &status);
  CHECK(status == 0);
  for (const char* key : {"\"size_bytes\": 1000000,", "\"size_bytes\": 4000000,", "\"time_s\"", "\"algbw_bytes_per_s\"",
                          "\"busbw_bytes_per_s\""})
    CHECK(json.find(key) != std::string::npos);
  const std::string layout = run(std::string(CLUSTERSIM_BINARY) +
                                     " collective --topology h100-pcie-ethernet --nodes 32 --tp 8 --pp 16 --sizes 1GB",
                                 &status);
  CHECK(status == 0);
  CHECK(layout.find("128 concurrent dp groups of 2 ranks") != std::string::npos);
  const std::string text = run(std::string(CLUSTERSIM_BINARY) + " collective --topology dgx-h10 --nodes 2", &status);
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(text.find("did you mean 'dgx-h100'") != std::string::npos);
}

}}  // namespace CLUSTERSIM_TEST_ID
