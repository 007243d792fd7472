// Invariants over random valid scenarios (seeded, so every run checks the same cases).
#include <catch2/catch.hpp>

#include <random>

#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

struct RandomScenario {
  std::string yaml;
  std::vector<std::string> sets;
};

RandomScenario random_scenario(std::mt19937_64& rng) {
  auto pick = [&](const auto& options) { return options[rng() % options.size()]; };
  const std::vector<std::string> models = {"gpt3-1.3b", "gpt3-2.7b", "llama2-7b", "llama3-8b", "gpt3-6.7b"};
  const std::vector<std::string> gpus = {"a100-40gb", "a100-80gb", "h100-sxm", "h200-sxm", "b200"};
  const std::vector<int> cluster = {8, 16, 64, 256};
  const std::vector<int> seqs = {512, 1024, 2048, 4096};
  const std::vector<int> mbs = {1, 2, 4};
  const std::vector<int> accum = {1, 2, 4, 8};
  const std::vector<std::string> recompute = {"none", "selective", "full"};
  const int n = pick(cluster), mb = pick(mbs);
  RandomScenario s;
  s.yaml = testing::scenario_text(pick(models), pick(gpus), n, pick(seqs), n * mb * pick(accum),
                                  std::string("  zero_stage: ") + (rng() % 2 ? "1" : "0") + "\n");
  s.sets = {"training.micro_batch=" + std::to_string(mb), "training.recompute=" + pick(recompute),
            std::string("training.overlap_grad_reduce=") + (rng() % 2 ? "true" : "false"),
            std::string("training.flash_attention=") + (rng() % 4 ? "true" : "false")};
  return s;
}

}  // namespace

TEST_CASE("random valid scenarios keep the physical invariants", "[scenarios][property]") {
  std::mt19937_64 rng(20261130);
  for (int i = 0; i < 200; ++i) {
    const auto s = random_scenario(rng);
    INFO(s.yaml);
    const auto r = testing::run_text(s.yaml, s.sets);
    REQUIRE(r.mfu > 0);
    REQUIRE(r.mfu <= r.hfu * (1 + 1e-12));
    // No kernel beats the GEMM ceiling or the attention kernel's ceiling, so neither can HFU.
    const auto& g = r.scenario.gpu;
    const double ceiling = std::max({g.gemm_anchor.rate.si() / g.peak(hardware::Precision::bf16).si(),
                                     g.attention.fwd_max, g.attention.bwd_max});
    REQUIRE(r.hfu < ceiling + 0.08);  // + the causal-skip credit the FLOP formulas give attention
    REQUIRE(r.step_time_s >= r.flops.model * r.tokens_per_step / r.num_gpus / r.peak_flops);
    // The tokens of a step are the scenario's batch, whatever the plan (not a recomputation of
    // tokens_per_s, which is defined from it).
    REQUIRE(r.tokens_per_step == Approx(double(r.scenario.training.global_batch) * r.scenario.training.seq_len));
    const auto& b = r.step.breakdown;
    REQUIRE(b.forward_s + b.backward_s + b.recompute_s + b.optimizer_s + b.comm_exposed[models::Channel::dp] + b.idle_s ==
            Approx(r.step_time_s).epsilon(1e-9));
  }
}

TEST_CASE("more bandwidth or a faster Tensor Core never makes a random step slower", "[scenarios][property]") {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 60; ++i) {
    const auto s = random_scenario(rng);
    INFO(s.yaml);
    const auto base = testing::run_text(s.yaml, s.sets);
    const auto& g = base.scenario.gpu;
    auto with = [&](const std::string& set) {
      auto sets = s.sets;
      sets.push_back(set);
      return testing::run_text(s.yaml, sets).step_time_s;
    };
    REQUIRE(with("hardware.memory_bandwidth=" + std::to_string(g.hbm_bandwidth.si() * 1.5) + "B/s") <= base.step_time_s);
    REQUIRE(with("network.node.nic_bandwidth=" + std::to_string(base.scenario.network.topology.nic_bandwidth.si() * 2) + "B/s") <= base.step_time_s);
    REQUIRE(with("network.node.nvlink_bandwidth=" + std::to_string(base.scenario.network.topology.nvlink_bandwidth.si() * 2) + "B/s") <= base.step_time_s);
    REQUIRE(with("hardware.gemm_mamf.rate=" + std::to_string(g.gemm_anchor.rate.si() * 1.2) + "FLOP/s") <= base.step_time_s);
  }
}

TEST_CASE("more GPUs at a fixed per-GPU batch never lose more throughput than the added communication explains",
          "[scenarios][property]") {
  for (const char* model : {"llama2-7b", "gpt3-1.3b"}) {
    double previous_total = 0;
    for (int gpus : {8, 32, 128, 512}) {
      const auto r = testing::run_text(testing::scenario_text(model, "h100-sxm", gpus, 2048, gpus * 4,
                                                              "  zero_stage: 1\n"));
      INFO(model << " on " << gpus);
      const double comm_free_tps = r.tokens_per_step / (r.step_time_s - r.step.breakdown.comm_exposed[models::Channel::dp] -
                                                        r.step.compute_slowdown_s);
      REQUIRE(r.tokens_per_s > previous_total);  // cluster throughput still grows
      REQUIRE(r.tokens_per_s <= comm_free_tps * (1 + 1e-9));
      previous_total = r.tokens_per_s;
    }
  }
}

TEST_CASE("the same random scenario twice gives identical reports", "[scenarios][property]") {
  std::mt19937_64 rng(99);
  for (int i = 0; i < 20; ++i) {
    const auto s = random_scenario(rng);
    const auto a = testing::run_text(s.yaml, s.sets), b = testing::run_text(s.yaml, s.sets);
    REQUIRE(a.step_time_s == b.step_time_s);
    REQUIRE(a.step.events == b.step.events);
    REQUIRE(a.memory.total_bytes == b.memory.total_bytes);
  }
}

}}  // namespace CLUSTERSIM_TEST_ID
