// training.activation_fp8_input_store (DeepSeek-V3 §3.3.2, Megatron-Core
// --activation-func-fp8-input-store): the SwiGLU's saved input in FP8, the casts that make it, and
// the FP8 copies a split backward keeps for its W pass.
#include <catch2/catch.hpp>

#include <string>

#include "models/layer_ops.hpp"
#include "models/moe_ops.hpp"
#include "support/kernel_ops.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using Catch::Matchers::Contains;

namespace {

// Llama-3 8B (SwiGLU, ffn 14336, 32 layers) on 8 H100, one 4096-token sequence per micro-batch.
std::string llama8b(const std::string& parallel = "  pp: 1\n", const std::string& training = "") {
  return testing::scenario_text("llama3-8b", "h100-sxm", 8, 4096, 8, parallel,
                                "  micro_batch: 1\n  recompute: none\n" + training);
}

// Qwen3-30B-A3B (48 MoE layers, 128 experts of 768, top-8, no shared expert) on 8 H100, EP 8,
// routing forced even so that each rank receives tokens · top_k token copies.
std::string qwen30b(const std::string& training = "") {
  return testing::scenario_text("qwen3-30b-a3b", "h100-sxm", 8, 4096, 8, "  pp: 1\n  ep: 8\n",
                                "  micro_batch: 1\n  moe_load_imbalance: 1\n" + training);
}

double activations(const std::string& yaml, bool fp8_store) {
  return testing::run_text(yaml, {std::string("training.activation_fp8_input_store=") + (fp8_store ? "true" : "false")})
      .memory.activations_bytes;
}

}  // namespace

TEST_CASE("activation_fp8_input_store: SwiGLU only, as Megatron-Core requires", "[models][memory]") {
  CHECK(testing::load_error_of(llama8b("  pp: 1\n", "  activation_fp8_input_store: true\n")).empty());
  const std::string gelu = testing::scenario_text("gpt3-1.3b", "h100-sxm", 8, 2048, 8, "",
                                                  "  activation_fp8_input_store: true\n");
  CHECK_THAT(testing::load_error_of(gelu), Contains("training.activation_fp8_input_store") && Contains("SwiGLU") &&
                                               Contains("gelu"));
  CHECK_THAT(testing::load_error_of(llama8b("  pp: 1\n", "  activation_fp8_input_store: 3\n")),
             Contains("training.activation_fp8_input_store"));
}

TEST_CASE("activation_fp8_input_store: the gate/up output is kept in 1 B instead of 2", "[models][memory]") {
  // Dense: 32 blocks of one micro-batch, each keeping 4096 x 2 x 14336 gate/up elements.
  const double dense = activations(llama8b(), false) - activations(llama8b(), true);
  CHECK(dense == Approx(32.0 * 4096 * 2 * 14336 * (2 - 1)).epsilon(1e-9));
  // Routed experts: 48 layers, 4096 x 8 token copies per rank, 2 x 768 gate/up each.
  const double routed = 48.0 * 4096 * 8 * 2 * 768;
  CHECK(activations(qwen30b(), false) - activations(qwen30b(), true) == Approx(routed).epsilon(1e-6));
  // Rerunning the activation's output (moe_act) keeps its FP8 input, as DeepSeek-V3 does.
  const std::string act = qwen30b("  recompute: selective\n  recompute_modules: [moe_act]\n");
  CHECK(activations(act, false) - activations(act, true) == Approx(routed).epsilon(1e-6));
}

TEST_CASE("activation_fp8_input_store: a cast to FP8 after fc1 and one back before the activation's backward",
          "[models][time]") {
  const scenarios::Scenario on = scenarios::load_scenario_string(llama8b("  pp: 1\n", "  activation_fp8_input_store: true\n"), "<t>");
  const scenarios::Scenario off = scenarios::load_scenario_string(llama8b(), "<t>");
  const models::StepCosts c = models::step_costs(on.model, on.training, on.parallel, on.gpu);
  const double cast = 4096.0 * 2 * 14336 * (2 + 1);  // read BF16, write FP8 (and back)
  CHECK(testing::bytes_named(c.layer_fwd, "mlp.swiglu_in.fp8_store") == Approx(cast));
  CHECK(testing::bytes_named(c.layer_bwd, "mlp.swiglu_in.fp8_load") == Approx(cast));
  const models::StepCosts c0 = models::step_costs(off.model, off.training, off.parallel, off.gpu);
  CHECK(testing::bytes_named(c0.layer_fwd, "mlp.swiglu_in.fp8_store") == 0);
  CHECK(c.layer_fwd.time_s > c0.layer_fwd.time_s);
  // The experts' grouped MLP: per rank 4096 x 8 routed copies of 2 x 768.
  const scenarios::Scenario moe = scenarios::load_scenario_string(qwen30b("  activation_fp8_input_store: true\n"), "<t>");
  const models::MoeLayerOps o = models::moe_layer_ops(moe.model, moe.training, moe.parallel,
                                                      models::expert_parallel(moe.parallel), moe.gpu, 1.0);
  CHECK(testing::bytes_named(o.experts_fwd, "experts.swiglu_in.fp8_store") ==
        Approx(4096.0 * 8 * 2 * 768 * 3).epsilon(1e-6));
  CHECK(testing::bytes_named(o.experts_bwd, "experts.swiglu_in.fp8_load") ==
        Approx(4096.0 * 8 * 2 * 768 * 3).epsilon(1e-6));
}

TEST_CASE("a split backward keeps the W pass's X and dY as the linears keep them: FP8 copies in FP8",
          "[models][memory]") {
  // zb-h1 defers each block's wgrad GEMMs; Transformer Engine's wgrad store holds the quantized
  // input and the columnwise-quantized output gradient (module/linear.py, delay_wgrad_compute).
  const std::string zb = "  pp: 2\n  schedule: zb-h1\n";
  const auto bf16 = testing::run_text(llama8b(zb, "  precision: bf16\n"));
  const auto fp8 = testing::run_text(llama8b(zb, "  precision: fp8\n"));
  REQUIRE(bf16.memory.block_kept_for_w_bytes > 0);
  CHECK(fp8.memory.block_kept_for_w_bytes == Approx(bf16.memory.block_kept_for_w_bytes / 2).epsilon(1e-9));
}

}}  // namespace CLUSTERSIM_TEST_ID
