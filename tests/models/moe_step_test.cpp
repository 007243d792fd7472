// The MoE step: expert groups folded over the stage's ranks, the dispatch/combine all-to-alls
// on the scenario's network, expert parallelism and load imbalance moving what they should,
// and DeepSeek-V3's 61 layers + MTP over uneven pipelines.
#include <catch2/catch.hpp>
#include <tuple>
#include <fmt/format.h>

#include "models/moe_ops.hpp"
#include "models/step_program_moe.hpp"
#include "scenarios/assumptions.hpp"
#include "scenarios/error.hpp"
#include "scenarios/simulate.hpp"
#include "support/scenario_fixture.hpp"
#include "topologies/network.hpp"
#include "topologies/placement.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using topologies::GroupDim;

namespace {

// A small MoE model: 16 experts of width 512, top-2, on H100 nodes of 8.
std::string moe_scenario(int gpus, const std::string& parallelism, const std::string& training = "") {
  return fmt::format(R"(
model: {{layers: 4, hidden: 2048, heads: 16, ffn_hidden: 8192, vocab: 32000, activation: swiglu,
        moe: {{experts: 16, top_k: 2, expert_ffn_hidden: 1024}}}}
hardware: h100-sxm
cluster: {{gpus: {}}}
parallelism: {{{}}}
training: {{seq_len: 4096, global_batch: {}, micro_batch: 1{}}}
)", gpus, parallelism, 2 * gpus, training);
}

// The network's all-to-all over the scenario's EP groups for a per-rank buffer of `bytes`.
double a2a(const scenarios::Scenario& sc, double bytes) {
  const topologies::Network net(sc.network.topology, topologies::Network::nodes_for(sc.network.topology, sc.cluster.gpus),
                                {sc.parallel.sizes(), sc.network.placement});
  return net.cost(topologies::Collective::all_to_all, GroupDim::ep, units::Bytes(bytes)).time.si();
}

std::string load_error(const std::string& yaml) {
  try {
    scenarios::load_scenario_string(yaml, "m.yaml");
  } catch (const scenarios::ScenarioError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("expert groups fold over a stage's ranks: etp fastest, then ep, then edp", "[topologies][moe]") {
  topologies::Layout l;  // tp 2 x dp 8 = 16 ranks; etp 2 x ep 4 x edp 2
  l.sizes[index(GroupDim::tp)] = 2, l.sizes[index(GroupDim::dp)] = 8;
  l.sizes[index(GroupDim::ep)] = 4, l.sizes[index(GroupDim::etp)] = 2, l.sizes[index(GroupDim::edp)] = 2;
  const auto ep = topologies::groups_of(l, GroupDim::ep);
  REQUIRE(ep.size() == 4);
  CHECK(ep[0] == std::vector<int>{0, 2, 4, 6});
  CHECK(ep[1] == std::vector<int>{1, 3, 5, 7});
  CHECK(ep[2] == std::vector<int>{8, 10, 12, 14});
  CHECK(topologies::groups_of(l, GroupDim::etp)[0] == std::vector<int>{0, 1});
  CHECK(topologies::groups_of(l, GroupDim::edp)[0] == std::vector<int>{0, 8});
  // With pp 2 placed outermost the two stages' expert groups never mix.
  l.sizes[index(GroupDim::pp)] = 2;
  l.order = {GroupDim::tp, GroupDim::cp, GroupDim::dp, GroupDim::pp};
  for (const auto& g : topologies::groups_of(l, GroupDim::ep))
    for (int r : g) CHECK(r / 16 == g.front() / 16);
}

TEST_CASE("the dispatch/combine time follows the network's all-to-all over the EP group (NVLink vs InfiniBand)",
          "[models][moe]") {
  // Balanced routing so both runs move the same bytes per rank; the all-to-alls never overlap
  // each other, so the time they ran is the sum of the network's isolated costs.
  const std::string tr = ", moe_load_imbalance: 1.0";
  const auto in_node = testing::run_text(moe_scenario(16, "ep: 8", tr));
  const auto across = testing::run_text(moe_scenario(16, "ep: 16", tr));
  REQUIRE(in_node.step.comm_busy[models::Channel::ep] > 0);
  const double bytes = 4096.0 * 2 * 2048 * 2;  // T·k·h per micro-batch in bf16: every exchange of a layer
  const double ratio_network = a2a(across.scenario, bytes) / a2a(in_node.scenario, bytes);
  CHECK(ratio_network > 3);  // 8 NVLink peers vs half the peers behind one 400G NIC per GPU
  CHECK(across.step.comm_busy[models::Channel::ep] / in_node.step.comm_busy[models::Channel::ep] == Approx(ratio_network).epsilon(0.02));
  CHECK(across.step_time_s > in_node.step_time_s);
}

TEST_CASE("ep = 1 has no all-to-all, ep > 1 shards the experts' memory and adds the exchange", "[models][moe]") {
  const auto one = testing::run_text(moe_scenario(8, "ep: 1", ", moe_load_imbalance: 1.0"));
  const auto eight = testing::run_text(moe_scenario(8, "ep: 8", ", moe_load_imbalance: 1.0"));
  CHECK(one.step.comm_busy[models::Channel::ep] == 0);
  CHECK(one.step.breakdown.comm_exposed[models::Channel::ep] == 0);
  CHECK(eight.step.comm_busy[models::Channel::ep] > 0);
  // 16 experts of 3·2048·1024 parameters per layer, 4 layers: ep 8 keeps 2 of 16 per rank.
  const double expert_weights = 4 * 16 * 3.0 * 2048 * 1024 * 2;  // bf16
  CHECK(one.memory.weights_bytes - eight.memory.weights_bytes == Approx(expert_weights * 7 / 8).epsilon(1e-6));
}

TEST_CASE("auto load imbalance makes the busiest rank slower than forced-balanced routing", "[models][moe]") {
  const auto balanced = testing::run_text(moe_scenario(16, "ep: 8", ", moe_load_imbalance: 1.0"));
  const auto automatic = testing::run_text(moe_scenario(16, "ep: 8", ", moe_load_imbalance: auto"));
  const auto skewed = testing::run_text(moe_scenario(16, "ep: 8", ", moe_load_imbalance: 1.5"));
  CHECK(automatic.step_time_s > balanced.step_time_s);
  CHECK(skewed.step_time_s > automatic.step_time_s);
  // The busiest rank receives 1.5x the tokens: every exchange is the network's all-to-all of 1.5x the buffer.
  const double bytes = 4096.0 * 2 * 2048 * 2;
  CHECK(skewed.step.comm_busy[models::Channel::ep] / balanced.step.comm_busy[models::Channel::ep] ==
        Approx(a2a(skewed.scenario, 1.5 * bytes) / a2a(balanced.scenario, bytes)).epsilon(0.02));
  CHECK(skewed.memory.activations_bytes > balanced.memory.activations_bytes);
}

TEST_CASE("an MoE scenario with tp > 1 and no sequence_parallel key runs with it on, and says so", "[scenarios][moe]") {
  const auto r = testing::run_text(moe_scenario(16, "ep: 2, tp: 2"));
  CHECK(r.scenario.parallel.sequence_parallel);
  bool stated = false;
  for (const auto& a : scenarios::assumptions(r)) stated = stated || a.key == "parallelism.sequence_parallel";
  CHECK(stated);
  // Given, it is the user's: a dense model keeps Megatron-LM's default (off).
  CHECK_FALSE(scenarios::load_scenario_string(testing::scenario_text("llama3-8b", "h100-sxm", 8, 2048, 8), "<test>",
                                              {"parallelism.tp=2"}).parallel.sequence_parallel);
}

TEST_CASE("MoE parallelism and training keys: inconsistent values are exit-2 errors naming the key", "[scenarios][moe]") {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {moe_scenario(16, "ep: 3"), {"parallelism.ep", "divide the model's 16 routed experts"}},
      {moe_scenario(16, "ep: 16, pp: 2"), {"parallelism.ep", "tp·cp·dp = 8"}},
      {moe_scenario(16, "ep: 4, etp: 3"), {"parallelism.etp", "1024"}},
      {moe_scenario(16, "ep: 2, tp: 2, sequence_parallel: false"), {"parallelism.sequence_parallel", "needs sequence_parallel: true"}},
      {moe_scenario(16, "ep: 2", ", moe_dispatcher: nccl"), {"training.moe_dispatcher", "alltoall, allgather, deepep, hybridep"}},
      {moe_scenario(16, "ep: 2", ", moe_load_imbalance: 0.9"), {"training.moe_load_imbalance"}},
      {moe_scenario(16, "ep: 2", ", recompute_modules: [moe_act]"), {"training.recompute_modules", "selective"}},
      {moe_scenario(16, "ep: 2", ", recompute: selective, recompute_modules: [moe_ac]"),
       {"training.recompute_modules", "did you mean 'moe_act'"}},
      {testing::scenario_text("llama3-8b", "h100-sxm", 8, 2048, 8, "  ep: 2\n"), {"parallelism.ep", "dense model"}},
      {testing::scenario_text("llama3-8b", "h100-sxm", 8, 2048, 8, "", "  moe_a2a_overlap: true\n"),
       {"training.moe_a2a_overlap", "dense model"}},
  };
  for (const auto& [yaml, expected] : cases) {
    INFO(yaml);
    const std::string e = load_error(yaml);
    for (const auto& s : expected) REQUIRE_THAT(e, Catch::Contains(s));
  }
}

TEST_CASE("etp defaults to tp, as Megatron-LM does", "[scenarios][moe]") {
  const auto sc = scenarios::load_scenario_string(moe_scenario(16, "tp: 2, sequence_parallel: true, ep: 4"), "m.yaml");
  CHECK(sc.parallel.etp == 2);
  CHECK(sc.parallel.edp() == 2);
}

TEST_CASE("DeepSeek-V3's 61 layers + MTP run over 4, 8 and 16 stages without a hand-written split", "[models][moe]") {
  for (int pp : {4, 8, 16}) {
    INFO(pp);
    const auto r = testing::run_text(fmt::format(R"(
model: deepseek-v3
hardware: h100-sxm
cluster: {{gpus: {}}}
network: {{placement: [tp, cp, dp, pp]}}
parallelism: {{tp: 1, pp: {}, ep: 64, zero_stage: 1}}
training: {{seq_len: 4096, global_batch: {}, micro_batch: 1, precision: fp8, fp8_recipe: blockwise}}
)", 64 * pp, pp, 64 * pp));
    CHECK(r.step_time_s > 0);
    CHECK(r.step.comm_busy[models::Channel::ep] > 0);
    CHECK(r.step.stages.size() == std::size_t(pp));
  }
}

TEST_CASE("a routed MLP of many small experts is host-bound: a launch per local expert per grouped GEMM after the sync",
          "[models][moe]") {
  // 128 experts of width 64 over ep 2: 64 local experts, ~4 tokens each. TE's GroupedLinear issues
  // one cuBLAS GEMM per local expert, so after the dispatcher's tokens-per-expert sync the host
  // launches fc1 (64) + activation + fc2 (64) + sort/unsort + combine + unpermute, ~135 kernels at
  // 10 us (hardware.md 3.10) with an empty GPU queue: >= 1.3 ms of host time for far less GPU time.
  auto routed_forward = [](const std::string& training) {
    const auto sc = scenarios::load_scenario_string(fmt::format(R"(
model: {{layers: 2, hidden: 256, heads: 4, ffn_hidden: 1024, vocab: 32000, activation: swiglu,
        moe: {{experts: 128, top_k: 1, expert_ffn_hidden: 64}}}}
hardware: h100-sxm
cluster: {{gpus: 2}}
parallelism: {{ep: 2}}
training: {{seq_len: 256, global_batch: 2, micro_batch: 1, moe_load_imbalance: 1.0{}}}
)", training));
    const topologies::Network net(sc.network.topology, topologies::Network::nodes_for(sc.network.topology, sc.cluster.gpus),
                                  {sc.parallel.sizes(), sc.network.placement});
    const auto ops = models::moe_layer_ops(sc.model, sc.training, sc.parallel, models::expert_parallel(sc.parallel), sc.gpu,
                                           sc.training.moe_load_imbalance);
    for (const auto& op : ops.experts_fwd.ops)
      if (op.kind == models::OpKind::gemm) CHECK(op.kernels == 64);
    const auto x = models::routed_exchanges(sc.model, sc.training, sc.parallel, ops, sc.gpu, net);
    const auto c = scenarios::step_costs_of(sc);
    const auto prog = models::block_program(sc.model, sc.training, sc.parallel, sc.gpu, c, net);
    double compute = 0;
    for (const auto& item : models::routed_program(sc.model, sc.training, sc.parallel, ops, x, {}, {}).forward)
      if (!item.comm) compute += item.seconds;
    double with_host = 0;
    for (const auto& item : prog.block(1).forward)
      if (!item.comm) with_host += item.seconds;
    double block_gpu = 0;
    for (int i = 0; i < models::kBlockParts; ++i)  // the attention half; the MLP part is the (absent) shared experts
      for (const auto& op : c.part_fwd[static_cast<std::size_t>(i)].ops)
        if (op.name != "host_launch_wait" && i != models::mlp) block_gpu += op.time_s;
    return std::tuple{compute, with_host - block_gpu, ops.router_fwd.time_s + ops.permute_fwd.time_s + ops.experts_fwd.time_s};
  };
  const auto [gpu_only, routed, gpu] = routed_forward(", moe_permute_fusion: true, moe_router_fusion: true");
  INFO("routed forward with host " << routed << " s, GPU work " << gpu << " s");
  CHECK(gpu_only == Approx(gpu));  // without host waits the routed program is its GPU work
  CHECK(gpu < 0.5e-3);
  CHECK(routed - gpu > 1.3e-3);  // the ~135 launches after the sync, less nothing: the queue is empty
  // Replayed from CUDA graphs (full_iteration) the block is its GPU work.
  const auto graphs = routed_forward(", cuda_graphs: true");
  CHECK(std::get<1>(graphs) == Approx(std::get<2>(graphs)).margin(1e-9));
}

TEST_CASE("expert gradients reduce during the last backward when overlap_grad_reduce is on", "[models][moe]") {
  // GPT-OSS-120B on 64 B300 (EP 8 x EDP 8): 14 B expert parameters per rank, whose reduce-scatter
  // over the expert-DP group is most of the step's DP traffic. Megatron's DDP launches their
  // buckets as the backward fills them, as it does the dense ones.
  const std::string yaml = R"(name: gpt-oss on 64 b300
model: gpt-oss-120b
hardware: b300
cluster: {gpus: 64}
parallelism: {tp: 1, pp: 1, ep: 8, zero_stage: 1}
training: {seq_len: 4096, global_batch: 1280, micro_batch: 4, precision: bf16, recompute: none}
)";
  const auto on = testing::run_text(yaml);
  const auto off = testing::run_text(yaml, {"training.overlap_grad_reduce=false"});
  INFO("exposed DP: overlap on " << on.step.breakdown.comm_exposed[models::Channel::dp] << " s, off " << off.step.breakdown.comm_exposed[models::Channel::dp] << " s");
  // Off: everything waits for the last backward. On: the reduce-scatters run under the last
  // micro-batch's backward, and only what outlasts it trails (FP32 gradients: ~1.1 s of traffic
  // against a ~0.5 s backward). Reduced at the end, as before, both were ~1.1 s.
  CHECK(on.step.breakdown.comm_exposed[models::Channel::dp] < 0.7 * off.step.breakdown.comm_exposed[models::Channel::dp]);
  CHECK(on.step.step_time_s < off.step.step_time_s);
  // The traffic itself is the same either way.
  CHECK(on.step.comm_busy[models::Channel::dp] == Approx(off.step.comm_busy[models::Channel::dp]).epsilon(0.02));
}

}}  // namespace CLUSTERSIM_TEST_ID
