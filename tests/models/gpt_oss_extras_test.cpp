// GPT-OSS's extras as Megatron-Core runs them (docs/moe.md, "What GPT-OSS's extras cost"): YaRN
// RoPE unfused, the clamp before the experts' fused GLU, the fc2 expert bias added after the
// grouped GEMM. The expected bytes are the documented kernel sequences' traffic, counted here on
// the tensors' shapes.
#include <catch2/catch.hpp>

#include <string>

#include "models/flops.hpp"
#include "models/layer_ops.hpp"
#include "models/moe_ops.hpp"
#include "scenarios/load.hpp"
#include "support/kernel_ops.hpp"
#include "support/scenario_fixture.hpp"

namespace {
namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

// GPT-OSS-120B on one DGX H100, EP8, one 4,096-token sequence per micro-batch.
std::string gpt_oss(const std::string& model_extra = "") {
  return "model:\n  base: gpt-oss-120b\n" + model_extra +
         "hardware: h100-sxm\ncluster: {gpus: 8}\nparallelism: {ep: 8}\n"
         "training: {seq_len: 4096, global_batch: 8, micro_batch: 1, precision: bf16}\n";
}

constexpr double kTokens = 4096, kBf16 = 2;

}  // namespace

TEST_CASE("YaRN RoPE runs unfused: 12 bytes per byte of q and k forward, 10 backward, in 6 and 5 kernels",
          "[models][time]") {
  const auto yarn = scenarios::load_scenario_string(gpt_oss(), "<t>");
  const auto rope = scenarios::load_scenario_string(gpt_oss("  position: rope\n"), "<t>");
  REQUIRE(yarn.model.position == models::Position::yarn);  // the preset's, from rope_scaling
  const double qk = kTokens * (64 + 8) * 64 * kBf16;
  const auto cy = models::step_costs(yarn.model, yarn.training, yarn.parallel, yarn.gpu);
  const auto cr = models::step_costs(rope.model, rope.training, rope.parallel, rope.gpu);
  CHECK(testing::bytes_named(cy.layer_fwd, "rotary") == Approx(12 * qk));
  CHECK(testing::bytes_named(cy.layer_bwd, "rotary.bwd") == Approx(10 * qk));
  CHECK(testing::op_named(cy.layer_fwd, "rotary")->kernels == 6);
  CHECK(testing::bytes_named(cr.layer_fwd, "rotary") == Approx(2 * qk));
  CHECK(cy.layer_fwd.time_s > cr.layer_fwd.time_s);
  // The same model otherwise: parameters and FLOPs do not move.
  CHECK(models::count_params(yarn.model, 4096).total == models::count_params(rope.model, 4096).total);
  CHECK(models::flops_per_token(yarn.model, yarn.training).model ==
        models::flops_per_token(rope.model, rope.training).model);
}

TEST_CASE("the experts' GLU clamp and fc2 bias: passes over the fc1 and fc2 outputs", "[models][time]") {
  const auto sc = scenarios::load_scenario_string(gpt_oss(), "<t>");
  REQUIRE(sc.model.activation_clamp == 7);
  const auto o =
      models::moe_layer_ops(sc.model, sc.training, sc.parallel, models::expert_parallel(sc.parallel), sc.gpu, 1.0);
  const double rows = kTokens * 4;  // this rank's routed copies under balance (top-4, EP8)
  const double fc1_out = rows * 2 * 2880 * kBf16, fc2_out = rows * 2880 * kBf16;
  CHECK(testing::bytes_named(o.experts_fwd, "experts.act.clamp") == Approx(4 * fc1_out));
  CHECK(testing::bytes_named(o.experts_bwd, "experts.act.clamp.bwd") == Approx(5 * fc1_out));
  CHECK(testing::bytes_named(o.experts_fwd, "experts.fc2_bias") == Approx(6 * fc2_out));
  CHECK(testing::op_named(o.experts_fwd, "experts.fc2_bias")->kernels == 2 * 16 + 1);  // 128 / 8 local experts
  const auto plain = scenarios::load_scenario_string(gpt_oss("  activation_clamp: 0\n  bias: false\n"), "<t>");
  const auto p = models::moe_layer_ops(plain.model, plain.training, plain.parallel,
                                       models::expert_parallel(plain.parallel), plain.gpu, 1.0);
  CHECK(testing::op_named(p.experts_fwd, "experts.act.clamp") == nullptr);
  CHECK(testing::op_named(p.experts_fwd, "experts.fc2_bias") == nullptr);
}

TEST_CASE("moe_act recompute reruns the clamp with the activation", "[models][time]") {
  auto step = [&](const std::string& model_extra, bool rerun) {
    std::string y = gpt_oss(model_extra);
    if (rerun)
      y.replace(y.find("precision: bf16}"), 16, "precision: bf16, recompute: selective, recompute_modules: [moe_act]}");
    return testing::run_text(y).step.step_time_s;
  };
  const double clamp_cost = step("", false) - step("  activation_clamp: 0\n", false);
  const double clamp_cost_rerun = step("", true) - step("  activation_clamp: 0\n", true);
  CHECK(clamp_cost > 0);
  CHECK(clamp_cost_rerun > 1.2 * clamp_cost);  // its forward (4 of its 9 bytes per fc1 byte) runs twice
}

TEST_CASE("activation_clamp is refused without a gated MLP or without experts", "[scenarios][errors]") {
  const std::string dense =
      "model:\n  base: llama3-8b\n  activation_clamp: 7\nhardware: h100-sxm\ncluster: {gpus: 8}\n"
      "training: {seq_len: 4096, global_batch: 8}\n";
  CHECK_THAT(testing::load_error_of(dense), Catch::Contains("activation_clamp") && Catch::Contains("MoE experts only"));
  CHECK_THAT(testing::load_error_of(gpt_oss("  activation: gelu\n")),
             Catch::Contains("activation_clamp") && Catch::Contains("gated"));
}

}  // namespace CLUSTERSIM_TEST_ID
}  // namespace
