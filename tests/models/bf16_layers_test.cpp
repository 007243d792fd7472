// training.bf16_layers: Megatron-Core's --first-last-layers-bf16. The first and last blocks run
// their linears in BF16 while the rest use the training's low precision.
#include <catch2/catch.hpp>

#include <string>

#include "scenarios/explain.hpp"
#include "support/scenario_fixture.hpp"

namespace {
namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using Catch::Matchers::Contains;

namespace {

// Llama-3 8B (32 blocks) on 8 H100 in FP8 current scaling, no pipeline.
std::string llama8b(const std::string& precision, const std::string& bf16_layers) {
  const std::string recipe = precision == "fp8" ? "  fp8_recipe: tensorwise\n" : "";
  return testing::scenario_text("llama3-8b", "h100-sxm", 8, 8192, 64, "  pp: 1\n  zero_stage: 1\n",
                                "  micro_batch: 1\n  precision: " + precision + "\n" + recipe +
                                    (bf16_layers.empty() ? "" : "  bf16_layers: " + bf16_layers + "\n"));
}

// Seconds per step of the recipe's quantize kernels (explain's kernel table).
double quantize_seconds(const std::string& yaml) {
  const auto sc = scenarios::load_scenario_string(yaml, "<t>");
  const auto ex = scenarios::explain(sc, scenarios::simulate(sc));
  double s = 0;
  for (const auto& op : ex.ops)
    if (op.name.find("quantize") != std::string::npos) s += op.seconds_per_step;
  return s;
}

}  // namespace

TEST_CASE("bf16_layers: every block in BF16 is the BF16 run, in time and in memory", "[models][precision]") {
  // Outside the blocks nothing changes with the precision here (the LM head stays BF16 in FP8
  // training), so the two paths (BF16 block programs spliced in, and a BF16 training) must agree.
  const auto all = testing::run_text(llama8b("fp8", "{first: 32}"));
  const auto halves = testing::run_text(llama8b("fp8", "{first: 16, last: 16}"));
  const auto bf16 = testing::run_text(llama8b("bf16", ""));
  CHECK(all.step_time_s == Approx(bf16.step_time_s).epsilon(1e-12));
  CHECK(halves.step_time_s == Approx(bf16.step_time_s).epsilon(1e-12));
  CHECK(all.memory.total_bytes == Approx(bf16.memory.total_bytes).epsilon(1e-12));
}

TEST_CASE("bf16_layers: each BF16 block adds one block's difference in time and saved inputs", "[models][precision]") {
  const auto fp8 = testing::run_text(llama8b("fp8", ""));
  const auto bf16 = testing::run_text(llama8b("bf16", ""));
  const auto last4 = testing::run_text(llama8b("fp8", "{last: 4}"));
  const double per_block = (bf16.step_time_s - fp8.step_time_s) / 32;
  REQUIRE(per_block > 0);
  CHECK(last4.step_time_s == Approx(fp8.step_time_s + 4 * per_block).epsilon(0.01));
  // Transformer Engine keeps FP8 copies of the linears' inputs; a BF16 block keeps BF16 ones.
  const double act_block = (bf16.memory.activations_bytes - fp8.memory.activations_bytes) / 32;
  REQUIRE(act_block > 0);
  CHECK(last4.memory.activations_bytes == Approx(fp8.memory.activations_bytes + 4 * act_block).epsilon(1e-9));
  CHECK(last4.memory.weights_bytes == fp8.memory.weights_bytes);
}

TEST_CASE("bf16_layers: the kernel table drops the BF16 blocks' quantize kernels", "[models][precision]") {
  const double none = quantize_seconds(llama8b("fp8", ""));
  REQUIRE(none > 0);
  // The LM head is BF16 in both, so every quantize kernel is a block's: 4 of 32 blocks go.
  CHECK(quantize_seconds(llama8b("fp8", "{first: 2, last: 2}")) == Approx(none * 28 / 32).epsilon(1e-9));
  CHECK(quantize_seconds(llama8b("fp8", "{first: 32}")) == Approx(0.0).margin(1e-15));
}

TEST_CASE("bf16_layers: the hybrid stack's last blocks in BF16 sit between NVFP4 and BF16", "[models][precision]") {
  const std::string super =
      testing::scenario_text("nemotron3-super-120b-a12b", "gb200", 64, 8192, 512,
                             "  pp: 1\n  ep: 64\n  zero_stage: 1\n", "  micro_batch: 1\n  precision: nvfp4\n");
  const auto nvfp4 = testing::run_text(super);
  const auto last14 = testing::run_text(super, {"training.bf16_layers={last: 14}"});
  const auto bf16 = testing::run_text(super, {"training.precision=bf16"});
  CHECK(nvfp4.step_time_s < last14.step_time_s);
  CHECK(last14.step_time_s < bf16.step_time_s);
  // 14 of the 88 blocks: the share of the way to BF16 is near 14/88 (the blocks differ by kind).
  const double share = (last14.step_time_s - nvfp4.step_time_s) / (bf16.step_time_s - nvfp4.step_time_s);
  CHECK(share > 0.08);
  CHECK(share < 0.30);
}

TEST_CASE("bf16_layers: refused without a low precision, with delayed scaling, beyond a stage, or with unknown keys",
          "[models][precision]") {
  CHECK_THAT(testing::load_error_of(llama8b("bf16", "{last: 1}")),
             Contains("training.bf16_layers") && Contains("needs training.precision fp8, mxfp8 or nvfp4"));
  const std::string delayed = testing::scenario_text("llama3-8b", "h100-sxm", 8, 8192, 64, "  pp: 1\n",
                                                     "  precision: fp8\n  bf16_layers: {last: 1}\n");
  CHECK_THAT(testing::load_error_of(delayed), Contains("training.bf16_layers") && Contains("delayed"));
  CHECK_THAT(testing::load_error_of(llama8b("fp8", "{last: 33}")), Contains("training.bf16_layers.last"));
  CHECK_THAT(testing::load_error_of(llama8b("fp8", "{end: 2}")), Contains("end"));
  CHECK(testing::load_error_of(llama8b("fp8", "{first: 1, last: 31}")).empty());
}

}  // namespace CLUSTERSIM_TEST_ID
}  // namespace
