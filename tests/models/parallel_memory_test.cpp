// Per-stage memory against Korthikanti et al. 2022 and the pipeline schedules' in-flight counts.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "models/memory.hpp"
#include "scenarios/load.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

scenarios::Scenario gpt(const std::string& parallelism, int gpus, int global_batch, const std::string& training = "",
                        const std::string& hardware = "a100-80gb") {
  return scenarios::load_scenario_string(fmt::format(R"(
model: {{layers: 16, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 51200, activation: gelu, tied_embeddings: true}}
hardware: {}
cluster: {{gpus: {}}}
parallelism: {{{}}}
training: {{seq_len: 2048, global_batch: {}, micro_batch: 1, flash_attention: false{}}}
)", hardware, gpus, parallelism, global_batch, training));
}

models::MemoryEstimate stage_memory(const scenarios::Scenario& sc, int stage) {
  return models::estimate_memory_per_stage(sc.model, sc.training, sc.parallel, sc.gpu)[std::size_t(stage)];
}

}  // namespace

TEST_CASE("activations per layer follow Korthikanti et al. 2022 with TP and SP", "[models]") {
  const double s = 2048, b = 1, h = 4096, a = 32, t = 4, L = 16;
  // Eq. 2 (TP): s·b·h·(10 + 24/t + 5·a·s/(h·t)); eq. 4 (TP + SP): s·b·h/t·(34 + 5·a·s/h).
  const double tp_layer = s * b * h * (10 + 24 / t + 5 * a * s / (h * t));
  const double sp_layer = s * b * h / t * (34 + 5 * a * s / h);
  const double input = s * b * h * 2;  // embedding output kept for backward (÷ t with SP)
  const auto tp = stage_memory(gpt("tp: 4", 4, 1), 0);
  const auto sp = stage_memory(gpt("tp: 4, sequence_parallel: true", 4, 1), 0);
  REQUIRE(tp.activations_bytes == Approx(L * tp_layer + input));
  REQUIRE(sp.activations_bytes == Approx(L * sp_layer + input / t));
  // Full recompute keeps 2·s·b·h per layer input (÷ t with SP) plus one layer being rebuilt.
  const auto full = stage_memory(gpt("tp: 4, sequence_parallel: true", 4, 1, ", recompute: full"), 0);
  REQUIRE(full.activations_bytes == Approx(L * input / t + sp_layer + input / t));
}

TEST_CASE("FP8 linears keep their quantized inputs for wgrad (Transformer Engine), torchao the BF16 ones", "[models]") {
  const double s = 2048, b = 1, h = 4096, a = 32, t = 4, L = 16;
  const double bf16_layer = s * b * h / t * (34 + 5 * a * s / h);  // Korthikanti eq. 4
  // TE keeps 1 B, not 2, of the QKV and MLP-up inputs (h wide) and of the MLP-down input (4h), and
  // the output projection keeps a 1-B copy of the attention output beside the BF16 one: 34 − 1 − 1 − 4 + 1.
  const double fp8_layer = s * b * h / t * (29 + 5 * a * s / h);
  const double input = s * b * h * 2 / t;
  auto activations = [&](const std::string& training) {
    return stage_memory(gpt("tp: 4, sequence_parallel: true", 4, 1, ", precision: fp8" + training, "h100-sxm"), 0)
        .activations_bytes;
  };
  REQUIRE(activations("") == Approx(L * fp8_layer + input));
  REQUIRE(activations(", fp8_saved_inputs: quantized") == Approx(L * fp8_layer + input));
  REQUIRE(activations(", fp8_saved_inputs: bf16") == Approx(L * bf16_layer + input));
  REQUIRE(activations(", fp8_recipe: rowwise") == Approx(L * bf16_layer + input));  // a torchao-only recipe
  // BF16 training is unchanged, and the key needs a low-precision run.
  REQUIRE(stage_memory(gpt("tp: 4, sequence_parallel: true", 4, 1, "", "h100-sxm"), 0).activations_bytes ==
          Approx(L * bf16_layer + input));
  REQUIRE_THROWS_WITH(gpt("tp: 4, sequence_parallel: true", 4, 1, ", fp8_saved_inputs: bf16", "h100-sxm"),
                      Catch::Contains("training.fp8_saved_inputs") && Catch::Contains("needs training.precision"));
  REQUIRE_THROWS_WITH(gpt("tp: 4, sequence_parallel: true", 4, 1, ", precision: fp8, fp8_saved_inputs: fp16", "h100-sxm"),
                      Catch::Contains("training.fp8_saved_inputs") && Catch::Contains("quantized"));
}

TEST_CASE("1F1B stage i holds pp - i micro-batches of activations", "[models]") {
  const auto sc = gpt("pp: 4", 4, 16);
  const auto stages = models::estimate_memory_per_stage(sc.model, sc.training, sc.parallel, sc.gpu);
  for (int i = 0; i < 4; ++i) REQUIRE(stages[std::size_t(i)].layers_in_flight == (4 - i) * 4);
  // Interleaving holds more on stage 0: (1 + (pp−1)/(pp·vpp))·pp·L/pp block-micro-batches in the
  // limit; with pp 4, vpp 2 Megatron's warm-up holds 11 chunks of 2 layers.
  const auto inter = gpt("pp: 4, vpp: 2", 4, 16);
  REQUIRE(stage_memory(inter, 0).layers_in_flight == 11 * 2);
  REQUIRE(stage_memory(inter, 0).activations_bytes > stages[0].activations_bytes);
}

TEST_CASE("model states per stage: the first holds the embedding, the last its tied copy", "[models]") {
  const auto sc = gpt("pp: 4, zero_stage: 1", 8, 16);
  const auto st = models::estimate_memory_per_stage(sc.model, sc.training, sc.parallel, sc.gpu);
  const double block = 12.0 * 4096 * 4096 + 13 * 4096;  // GPT block with biases and 2 LayerNorms
  const double embed = 51200.0 * 4096 + 2048.0 * 4096;  // padded vocab + learned positions
  const double head = 51200.0 * 4096 + 2 * 4096;         // tied copy + final LayerNorm
  REQUIRE(st[1].weights_bytes == Approx(4 * block * 2));
  REQUIRE(st[0].weights_bytes == Approx((4 * block + embed) * 2));
  REQUIRE(st[3].weights_bytes == Approx((4 * block + head) * 2));
  REQUIRE(st[1].gradients_bytes == Approx(4 * block * 4));
  REQUIRE(st[1].optimizer_bytes == Approx(4 * block * 12 / 2));  // ZeRO-1 over dp = 2
  REQUIRE(st[3].logits_bytes > 0);
  REQUIRE(st[1].logits_bytes == 0);
}

}}  // namespace CLUSTERSIM_TEST_ID
