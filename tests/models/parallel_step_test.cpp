// Each parallelism kind on the event simulation, checked against hand-derived expectations.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"
#include "topologies/network.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

// A GPT-like model whose blocks dominate (tiny vocabulary), on H100 nodes.
scenarios::Scenario scenario(const std::string& parallelism, int gpus, int global_batch,
                             const std::string& training_extra = "", int layers = 16, int seq = 2048) {
  const std::string yaml = fmt::format(R"(
model: {{layers: {}, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 1024, activation: gelu}}
hardware: h100-sxm
cluster: {{gpus: {}}}
parallelism: {{{}}}
training: {{seq_len: {}, global_batch: {}, micro_batch: 1{}}}
)", layers, gpus, parallelism, seq, global_batch, training_extra);
  return scenarios::load_scenario_string(yaml, "<test>");
}

// The scenario's network, as simulate() builds it: the expected transfer times below come from it.
double compute_s(const models::StepBreakdown& b) { return b.forward_s + b.backward_s + b.recompute_s; }

double sum(const models::StepBreakdown& b) {
  return b.forward_s + b.backward_s + b.recompute_s + b.optimizer_s + b.comm_exposed[models::Channel::dp] + b.idle_s +
         b.comm_exposed[models::Channel::tp] + b.comm_exposed[models::Channel::cp] + b.comm_exposed[models::Channel::pp] + b.bubble_s;
}

}  // namespace

TEST_CASE("the 1F1B bubble emerges as (pp-1)/m of the compute", "[models]") {
  for (int m : {8, 16, 32}) {
    const auto r = scenarios::simulate(scenario("pp: 4", 4, m));
    const auto& b = r.step.breakdown;
    INFO("m = " << m << ", bubble " << b.bubble_s << " s, compute " << compute_s(b) << " s");
    REQUIRE(b.bubble_s / compute_s(b) == Approx(3.0 / m).epsilon(0.08));
    REQUIRE(sum(b) == Approx(r.step_time_s).epsilon(1e-9));
  }
}

TEST_CASE("GPipe has the 1F1B bubble but holds every micro-batch's activations", "[models]") {
  const auto f1b = scenarios::simulate(scenario("pp: 4", 4, 16));
  const auto gpipe = scenarios::simulate(scenario("pp: 4, schedule: gpipe", 4, 16));
  REQUIRE(gpipe.step.breakdown.bubble_s == Approx(f1b.step.breakdown.bubble_s).epsilon(0.05));
  REQUIRE(f1b.memory.layers_in_flight == 4 * 4);    // stage 0: pp micro-batches × 4 layers
  REQUIRE(gpipe.memory.layers_in_flight == 16 * 4);  // every micro-batch × 4 layers
  REQUIRE(gpipe.memory.activations_bytes > 3.5 * f1b.memory.activations_bytes);
}

TEST_CASE("interleaving shrinks the bubble to (pp-1)/(m*vpp)", "[models]") {
  for (int vpp : {2, 4}) {
    const auto r = scenarios::simulate(scenario(fmt::format("pp: 4, vpp: {}", vpp), 4, 16));
    const auto& b = r.step.breakdown;
    INFO("vpp = " << vpp << ", bubble " << b.bubble_s << " s, compute " << compute_s(b) << " s");
    REQUIRE(b.bubble_s / compute_s(b) == Approx(3.0 / (16 * vpp)).epsilon(0.15));
    REQUIRE(sum(b) == Approx(r.step_time_s).epsilon(1e-9));
  }
}

TEST_CASE("an uneven pp_layers split makes the heavy stage the bottleneck", "[models]") {
  const auto even = scenarios::simulate(scenario("pp: 4", 4, 16));
  const auto uneven = scenarios::simulate(scenario("pp: 4, pp_layers: [2, 4, 4, 6]", 4, 16));
  REQUIRE(uneven.step.stage == 3);
  // 1F1B with unequal stages: m·t_max + Σ t_other = 16·6 + 2 + 4 + 4 layer-times, against
  // (m + pp − 1)·4 = 76 for the even split.
  REQUIRE(uneven.step_time_s / even.step_time_s == Approx(106.0 / 76.0).epsilon(0.05));
}

TEST_CASE("TP all-reduces: four per block and micro-batch, two of them exposed in forward", "[models]") {
  const auto r = scenarios::simulate(scenario("tp: 2", 2, 4, "", 4));
  const auto& sc = r.scenario;
  const double act = 2048.0 * 4096 * 2;  // [b·s, h] bf16
  const double ar = network_of(sc).cost(topologies::Collective::all_reduce, topologies::GroupDim::tp, units::Bytes(act)).time.si();
  // 4 micro-batches × 4 blocks × (2 forward + 2 backward), + embedding and head (1 each) per micro-batch.
  REQUIRE(r.step.comm_busy[models::Channel::tp] == Approx(4 * (4 * 4 + 2) * ar).epsilon(0.01));
  // Forward all-reduces block the next part; backward ones overlap the wgrad GEMMs.
  REQUIRE(r.step.breakdown.comm_exposed[models::Channel::tp] >= 4 * (4 * 2 + 2) * ar * 0.99);
  REQUIRE(r.step.breakdown.comm_exposed[models::Channel::tp] < r.step.comm_busy[models::Channel::tp]);
}

TEST_CASE("sequence parallelism keeps TP traffic but shards norm work and activations", "[models]") {
  const auto tp = scenarios::simulate(scenario("tp: 4", 4, 4, "", 4));
  const auto sp = scenarios::simulate(scenario("tp: 4, sequence_parallel: true", 4, 4, "", 4));
  // Reduce-scatter + all-gather move what one all-reduce moves (all on the ring with 4 GPUs;
  // NVLS only from 5, hardware.md §3.6), but they are twice as many collectives, each paying
  // NCCL's per-collective launch latency (§3.8), which is large next to a 17 MB transfer.
  REQUIRE(sp.step.comm_busy[models::Channel::tp] >= tp.step.comm_busy[models::Channel::tp]);
  REQUIRE(sp.step.comm_busy[models::Channel::tp] < 1.35 * tp.step.comm_busy[models::Channel::tp]);
  // With 8 GPUs on dgx-h100 the all-reduce takes NVLS (≈480 GB/s busbw, hardware.md §3.6) while
  // reduce-scatter and all-gather stay on the ring (≈367) and pay two launch latencies: every
  // all-reduce of the TP run is one reduce-scatter and one all-gather of the SP run (blocks,
  // embedding and head alike), so the busy times scale as (rs + ag) / ar.
  const auto tp8 = scenarios::simulate(scenario("tp: 8", 8, 8, "", 8));
  const auto sp8 = scenarios::simulate(scenario("tp: 8, sequence_parallel: true", 8, 8, "", 8));
  const auto net8 = network_of(tp8.scenario);
  const double act8 = 2048.0 * 4096 * 2;
  using topologies::Collective;
  const auto ar8 = net8.cost(Collective::all_reduce, topologies::GroupDim::tp, units::Bytes(act8));
  REQUIRE(ar8.algorithm == topologies::Algorithm::nvls);
  const double ratio = (net8.cost(Collective::reduce_scatter, topologies::GroupDim::tp, units::Bytes(act8)).time.si() +
                        net8.cost(Collective::all_gather, topologies::GroupDim::tp, units::Bytes(act8)).time.si()) / ar8.time.si();
  REQUIRE(sp8.step.comm_busy[models::Channel::tp] / tp8.step.comm_busy[models::Channel::tp] == Approx(ratio).epsilon(0.01));
  REQUIRE(sp.costs.layer_fwd.time_s < tp.costs.layer_fwd.time_s);
  // Korthikanti et al. 2022: 34·sbh/t + 5as²b/t (SP) vs 10·sbh + 24·sbh/t + 5as²b/t; with flash
  // the s² terms vanish, so the ratio is (10 + 24/4) / (34/4) ≈ 1.88 for t = 4.
  REQUIRE(tp.memory.activations_bytes / sp.memory.activations_bytes == Approx(16.0 / 8.5).epsilon(0.08));
  const auto overlap = scenarios::simulate(scenario("tp: 4, sequence_parallel: true, tp_comm_overlap: true", 4, 4, "", 4));
  REQUIRE(overlap.step.breakdown.comm_exposed[models::Channel::tp] < 0.5 * sp.step.breakdown.comm_exposed[models::Channel::tp]);
  REQUIRE(overlap.step_time_s < sp.step_time_s);
}

TEST_CASE("context parallelism splits attention and overlaps the K/V ring", "[models]") {
  // Two 8k sequences per step on one GPU, then split over a CP pair.
  const auto one = scenarios::simulate(scenario("cp: 1", 1, 2, "", 4, 8192));
  const auto two = scenarios::simulate(scenario("cp: 2", 2, 2, "", 4, 8192));
  // One K/V chunk (s/2 tokens × 2 × h, bf16) each way per block and micro-batch; twice that
  // (with dK/dV) in backward: 2 micro-batches × 4 blocks × 3 transfers.
  const double kv = 4096.0 * 2 * 4096 * 2;
  const auto net = network_of(two.scenario);
  const double hop = net.cost(topologies::Collective::send_recv, topologies::GroupDim::cp, units::Bytes(kv)).time.si();
  const double hop2 = net.cost(topologies::Collective::send_recv, topologies::GroupDim::cp, units::Bytes(2 * kv)).time.si();
  REQUIRE(two.step.comm_busy[models::Channel::cp] == Approx(2 * 4 * (hop + hop2)).epsilon(0.01));
  // Ring transfers hide behind the attention steps; each rank does half the work.
  REQUIRE(two.step.breakdown.comm_exposed[models::Channel::cp] < 0.3 * two.step.comm_busy[models::Channel::cp]);
  REQUIRE(compute_s(two.step.breakdown) / compute_s(one.step.breakdown) == Approx(0.5).epsilon(0.05));
}

TEST_CASE("ZeRO stages shard optimizer, gradients, then parameters, with their traffic", "[models]") {
  const std::string base = "tp: 1, zero_stage: ";
  auto run = [&](int z) { return scenarios::simulate(scenario(base + std::to_string(z), 16, 64, "", 8)); };
  const auto z0 = run(0), z1 = run(1), z2 = run(2), z3 = run(3);
  REQUIRE(z1.memory.optimizer_bytes == Approx(z0.memory.optimizer_bytes / 16));
  REQUIRE(z1.memory.gradients_bytes == Approx(z0.memory.gradients_bytes));
  // Sharded over 16, plus the full gradients (weights) of the two blocks in flight.
  const double block = z0.costs.layer_params;
  REQUIRE(z2.memory.gradients_bytes == Approx(z1.memory.gradients_bytes / 16 + 2 * block * 4));
  // FSDP keeps the fp32 shard (the optimizer's master) as the parameter: the BF16 weights are the
  // two blocks gathered at a time.
  REQUIRE(z3.memory.weights_bytes == Approx(2 * block * 2));
  REQUIRE(z3.memory.optimizer_bytes == Approx(z1.memory.optimizer_bytes));
  // ZeRO-2 reduce-scatters every micro-batch's gradients (4 here), ZeRO-1 only the last's.
  REQUIRE(z2.step.comm_busy[models::Channel::dp] > 2.5 * z1.step.comm_busy[models::Channel::dp]);
  // ZeRO-3 adds two parameter all-gathers per block and micro-batch.
  REQUIRE(z3.step.comm_busy[models::Channel::dp] > z2.step.comm_busy[models::Channel::dp]);
  const auto fsdp = scenarios::simulate(scenario("fsdp: true", 16, 64, "", 8));
  REQUIRE(fsdp.step_time_s == z3.step_time_s);
}

TEST_CASE("the same plan simulates to the same bytes twice", "[models]") {
  const auto a = scenarios::simulate(scenario("tp: 2, pp: 2, vpp: 2, sequence_parallel: true, zero_stage: 1", 8, 16));
  const auto b = scenarios::simulate(scenario("tp: 2, pp: 2, vpp: 2, sequence_parallel: true, zero_stage: 1", 8, 16));
  REQUIRE(a.step_time_s == b.step_time_s);
  REQUIRE(a.step.events == b.step.events);
}

TEST_CASE("pipeline sends block the sender unless overlapped", "[models]") {
  // One GPU per node: every stage-to-stage send crosses the network.
  auto sc = scenario("pp: 4", 4, 8);
  sc.network.topology.gpus_per_node = sc.network.topology.nics_per_node = 1;
  sc.cluster.gpus_per_node = 1;
  const auto blocking = scenarios::simulate(sc);
  sc.parallel.pp_comm_overlap = true;
  const auto overlapped = scenarios::simulate(sc);
  REQUIRE(blocking.step.breakdown.comm_exposed[models::Channel::pp] > 0);
  REQUIRE(overlapped.step_time_s < blocking.step_time_s);
  REQUIRE(sum(blocking.step.breakdown) == Approx(blocking.step_time_s).epsilon(1e-9));
}

}}  // namespace CLUSTERSIM_TEST_ID
