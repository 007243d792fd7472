// Full recompute of some blocks per pipeline stage (training.recompute_layers, Megatron's
// --recompute-method block): its cost and memory lie between no recompute and full recompute.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <string>

#include "models/memory.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"
#include "studies/memory_advice.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

// 8 layers over pp 2: 4 blocks per stage. Two-node FSDP-free layout, 8 micro-batches.
scenarios::Scenario llama(const std::string& recompute, const std::string& parallelism = "pp: 2") {
  return scenarios::load_scenario_string(fmt::format(R"(
model: {{layers: 8, hidden: 2048, heads: 16, ffn_hidden: 5504, vocab: 32000}}
hardware: h100-sxm
cluster: {{gpus: 8}}
parallelism: {{{}}}
training: {{seq_len: 4096, global_batch: 32, micro_batch: 1{}}}
)", parallelism, recompute));
}

struct Outcome {
  double step_s, recompute_s, activations, hfu;
};

Outcome run(const std::string& recompute, const std::string& parallelism = "pp: 2") {
  const scenarios::Report r = scenarios::simulate(llama(recompute, parallelism));
  return {r.step_time_s, r.step.breakdown.recompute_s, r.memory.activations_bytes, r.hfu};
}

std::string layers(int n) { return fmt::format(", recompute: full, recompute_layers: {}", n); }

}  // namespace

TEST_CASE("recompute_layers: 0 is no recompute, all of a stage's layers is full recompute", "[models][recompute]") {
  const Outcome none = run(""), full = run(", recompute: full");
  const Outcome zero = run(layers(0)), all = run(layers(4));
  CHECK(zero.step_s == Approx(none.step_s).epsilon(1e-12));
  CHECK(zero.recompute_s == 0);
  CHECK(zero.activations == Approx(none.activations).epsilon(1e-12));
  CHECK(zero.hfu == Approx(none.hfu).epsilon(1e-12));
  CHECK(all.step_s == Approx(full.step_s).epsilon(1e-12));
  CHECK(all.recompute_s == Approx(full.recompute_s).epsilon(1e-12));
  CHECK(all.activations == Approx(full.activations).epsilon(1e-12));
  CHECK(all.hfu == Approx(full.hfu).epsilon(1e-12));
  REQUIRE(full.step_s > none.step_s);
  REQUIRE(full.activations < none.activations);
}

TEST_CASE("recompute_layers: step time rises and activation memory falls strictly with each recomputed block",
          "[models][recompute]") {
  Outcome prev = run(layers(0));
  for (int n = 1; n <= 4; ++n) {
    const Outcome cur = run(layers(n));
    INFO("recompute_layers " << n);
    CHECK(cur.step_s > prev.step_s);
    CHECK(cur.recompute_s > prev.recompute_s);
    CHECK(cur.activations < prev.activations);
    prev = cur;
  }
  // Every block reruns the same forward, so the recompute time is n/4 of full recompute's (to
  // within the SM share DP traffic takes from whichever passes it overlaps: < 1 %).
  const Outcome full = run(", recompute: full");
  for (int n = 1; n < 4; ++n) CHECK(run(layers(n)).recompute_s == Approx(full.recompute_s * n / 4).epsilon(0.01));
}

TEST_CASE("recompute_layers: each recomputed block saves its activations but its input (Korthikanti et al. 2022 eq. 4)",
          "[models][recompute]") {
  // GPT-style block, TP 4 + SP, attention without FlashAttention: s·b·h/t·(34 + 5·a·s/h) bytes per
  // layer, of which a fully recomputed block keeps only its input, 2·s·b·h/t; while one block is
  // rebuilt its activations are live again (one layer's worth, as with full recompute).
  const double s = 2048, b = 1, h = 4096, a = 32, t = 4, L = 16;
  const double layer = s * b * h / t * (34 + 5 * a * s / h), input = 2 * s * b * h / t;
  auto activations = [&](int n) {
    const auto sc = scenarios::load_scenario_string(fmt::format(R"(
model: {{layers: 16, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 51200, activation: gelu, tied_embeddings: true}}
hardware: a100-80gb
cluster: {{gpus: 4}}
parallelism: {{tp: 4, sequence_parallel: true}}
training: {{seq_len: 2048, global_batch: 1, micro_batch: 1, flash_attention: false, recompute: full, recompute_layers: {}}}
)", n));
    return models::estimate_memory(sc.model, sc.training, sc.parallel, sc.gpu).activations_bytes;
  };
  CHECK(activations(0) == Approx(L * layer + input));  // the embedding output is kept too
  for (int n = 1; n <= 16; ++n) {
    INFO("recompute_layers " << n);
    CHECK(activations(n) == Approx(n * input + (L - n) * layer + layer + input));
  }
}

TEST_CASE("recompute_layers counts per model chunk with a virtual pipeline", "[models][recompute]") {
  // pp 2, vpp 2: chunks of 2 layers. recompute_layers 1 reruns half the blocks, as 2 of 4 does on pp 2.
  const Outcome chunk = run(layers(1), "pp: 2, vpp: 2");
  const Outcome full = run(", recompute: full", "pp: 2, vpp: 2");
  CHECK(chunk.recompute_s == Approx(full.recompute_s / 2).epsilon(0.01));
  CHECK_THROWS_WITH(llama(layers(3), "pp: 2, vpp: 2"), Catch::Contains("3 exceeds the 2 layers of a pipeline stage's model chunk"));
}

TEST_CASE("a plan that does not fit with some blocks recomputed is told to recompute more", "[models][recompute]") {
  const auto sc = scenarios::load_scenario_string(R"(
model: llama2-70b
hardware: h100-sxm
cluster: {gpus: 8}
parallelism: {zero_stage: 3}
training: {seq_len: 4096, global_batch: 16, micro_batch: 2, recompute: full, recompute_layers: 0}
)");
  const scenarios::Report r = scenarios::simulate(sc);
  REQUIRE_FALSE(r.memory.fits());
  CHECK_THAT(studies::memory_error(r), Catch::Contains("a larger training.recompute_layers (now 0)"));
}

}}  // namespace CLUSTERSIM_TEST_ID
