// Every transfer of the step comes from the scenario's one network: swapping the topology moves
// each parallel dimension's communication time by the ratio that the network's own collective
// (what `clustersim collective --group DIM` prints) gives for that dimension's transfer.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"
#include "topologies/network.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

namespace units = clustersim::units;
using namespace clustersim;
using topologies::Collective;
using topologies::GroupDim;

namespace {

constexpr const char* kEth = "h100-pcie-ethernet";
constexpr const char* kDgx = "dgx-h100";

scenarios::Scenario load(const std::string& yaml, const std::string& topology,
                         const std::vector<std::string>& sets = {}) {
  std::vector<std::string> all = sets;
  all.push_back("network.topology=" + topology);
  return scenarios::load_scenario_string(yaml, "<test>", all);
}

// Transfer time of `dim`'s transfer on each topology, and the ratio between them.
template <class F>
double cost_ratio(const scenarios::Scenario& eth, const scenarios::Scenario& dgx, F&& cost) {
  return cost(network_of(eth)) / cost(network_of(dgx));
}

std::string small_model(int layers) {
  return fmt::format("model: {{layers: {}, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 32000, activation: swiglu, "
                     "position: rope}}\nhardware: h100-sxm\n",
                     layers);
}

}  // namespace

TEST_CASE("issue 14 acceptance: TP traffic on PCIe boxes is as slow as `collective` says, >= 3x the DGX",
          "[models][network]") {
  const std::string file = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/70b_512xh100_tp8pp4.yaml";
  const auto dgx = scenarios::load_scenario_file(file, {"network.topology=dgx-h100"});
  const auto eth = scenarios::load_scenario_file(file, {"network.topology=h100-pcie-ethernet"});
  const auto rd = scenarios::simulate(dgx), re = scenarios::simulate(eth);
  // Sequence parallelism: every TP transfer is a reduce-scatter or an all-gather of one
  // activation [s/cp, h] in bf16, all of the same size.
  const double act = 8192.0 / 2 * 8192 * 2;
  const double expected = cost_ratio(eth, dgx, [&](const topologies::Network& n) {
    return n.cost(Collective::all_gather, GroupDim::tp, units::Bytes(act)).time.si();
  });
  INFO("TP busy: dgx " << rd.step.comm_busy[models::Channel::tp] << " s, ethernet " << re.step.comm_busy[models::Channel::tp] << " s");
  CHECK(expected >= 3.0);
  CHECK(re.step.comm_busy[models::Channel::tp] / rd.step.comm_busy[models::Channel::tp] == Approx(expected).epsilon(0.005));
}

TEST_CASE("a topology change moves CP ring time by the CP send ratio", "[models][network]") {
  // CP 2 with TP 4: the two CP ranks sit in one node; their K/V ring steps cross NVLink on the
  // DGX and the PCIe switches on the Ethernet box.
  const std::string yaml = small_model(4) +
                           "cluster: {gpus: 8}\nparallelism: {tp: 4, cp: 2}\n"
                           "training: {seq_len: 8192, global_batch: 2, micro_batch: 1}\n";
  const auto dgx = load(yaml, kDgx), eth = load(yaml, kEth);
  const auto rd = scenarios::simulate(dgx), re = scenarios::simulate(eth);
  // One K/V chunk forward, K/V and dK/dV backward, per block and micro-batch (s/cp tokens,
  // K and V of kv_heads/tp heads each... the sizes the step model sends).
  const double kv = rd.costs.kv_chunk_bytes;
  const double expected = cost_ratio(eth, dgx, [&](const topologies::Network& n) {
    return n.cost(Collective::send_recv, GroupDim::cp, units::Bytes(kv)).time.si() + n.cost(Collective::send_recv, GroupDim::cp, units::Bytes(2 * kv)).time.si();
  });
  INFO("CP busy: dgx " << rd.step.comm_busy[models::Channel::cp] << " s, ethernet " << re.step.comm_busy[models::Channel::cp] << " s");
  CHECK(expected > 3.0);
  CHECK(re.step.comm_busy[models::Channel::cp] / rd.step.comm_busy[models::Channel::cp] == Approx(expected).epsilon(0.005));
}

TEST_CASE("a topology change moves pipeline sends by the PP send ratio", "[models][network]") {
  // TP 8 fills a node, so every stage-to-stage send crosses the scale-out network: 400G NDR
  // per GPU on the DGX, a 100GbE NIC shared by four GPUs on the Ethernet box. No DP traffic, and
  // a blocking sender never has two sends in flight, so each send runs alone.
  const std::string yaml = small_model(8) +
                           "cluster: {gpus: 32}\nparallelism: {tp: 8, pp: 4}\n"
                           "training: {seq_len: 4096, global_batch: 8, micro_batch: 1}\n";
  const auto dgx = load(yaml, kDgx), eth = load(yaml, kEth);
  auto send_seconds = [](const scenarios::Scenario& sc) {
    std::vector<models::TimelineEntry> timeline;
    scenarios::simulate(sc, &timeline);
    double sum = 0;
    int sends = 0;
    for (const auto& e : timeline)
      if (e.kind == models::TaskKind::pp_send) sum += e.end_s - e.start_s, ++sends;
    CHECK(sends == 2 * 3 * 8);  // forward and backward, 3 stage boundaries, 8 micro-batches
    return sum;
  };
  const double bytes = 4096.0 * 4096 * 2 / 8;  // [s, h] bf16, 1/tp of it per TP rank
  const auto nd = network_of(dgx), ne = network_of(eth);
  for (int s = 0; s + 1 < 4; ++s)  // every boundary alike: the expectation below holds for each
    CHECK(ne.cost(Collective::send_recv, GroupDim::pp, units::Bytes(bytes), {s, s + 1}).time.si() ==
          Approx(ne.cost(Collective::send_recv, GroupDim::pp, units::Bytes(bytes), {0, 1}).time.si()));
  const double expected = ne.cost(Collective::send_recv, GroupDim::pp, units::Bytes(bytes), {0, 1}).time.si() /
                          nd.cost(Collective::send_recv, GroupDim::pp, units::Bytes(bytes), {0, 1}).time.si();
  CHECK(expected > 3.0);
  CHECK(send_seconds(eth) / send_seconds(dgx) == Approx(expected).epsilon(0.005));
}

TEST_CASE("a topology change moves DP traffic by the DP all-reduce ratio", "[models][network]") {
  // Plain DDP with one gradient bucket: one all-reduce of every fp32 gradient per step.
  // Llama's 32000-token vocabulary needs no padding, so the bucket holds exactly the parameters.
  const std::string yaml = small_model(4) +
                           "cluster: {gpus: 32}\nparallelism: {dp: 32}\n"
                           "training: {seq_len: 2048, global_batch: 32, micro_batch: 1, grad_bucket_params: 1e12}\n";
  const auto dgx = load(yaml, kDgx), eth = load(yaml, kEth);
  const auto rd = scenarios::simulate(dgx), re = scenarios::simulate(eth);
  REQUIRE(rd.step.grad_buckets == 1);
  const double bytes = rd.params.total * 4;
  const double t_dgx = network_of(dgx).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(bytes)).time.si();
  const double t_eth = network_of(eth).cost(Collective::all_reduce, GroupDim::dp, units::Bytes(bytes)).time.si();
  CHECK(rd.step.comm_busy[models::Channel::dp] == Approx(t_dgx).epsilon(1e-6));
  CHECK(re.step.comm_busy[models::Channel::dp] == Approx(t_eth).epsilon(1e-6));
  CHECK(t_eth / t_dgx > 3.0);
}

TEST_CASE("pipeline sends and DP collectives share the stage's NICs", "[models][network]") {
  // With the sends overlapped (they do not hold up the sender), the last micro-batch's sends run
  // while the DP all-reduce of the gradients is in flight on the same NIC links: a send then
  // takes longer than alone. Without DP traffic every send takes its isolated time.
  const std::string yaml = small_model(8) +
                           "cluster: {gpus: 64}\nparallelism: {tp: 8, pp: 4, pp_comm_overlap: true}\n"
                           "training: {seq_len: 4096, global_batch: 16, micro_batch: 1, grad_bucket_params: 1e6}\n";
  const auto sc = load(yaml, kDgx);
  std::vector<models::TimelineEntry> timeline;
  scenarios::simulate(sc, &timeline);
  const double bytes = 4096.0 * 4096 * 2 / 8;
  const double alone = network_of(sc).cost(Collective::send_recv, GroupDim::pp, units::Bytes(bytes), {0, 1}).time.si();
  double longest = 0;
  for (const auto& e : timeline)
    if (e.kind == models::TaskKind::pp_send) longest = std::max(longest, e.end_s - e.start_s);
  CHECK(longest > 1.05 * alone);
}

}}  // namespace CLUSTERSIM_TEST_ID
