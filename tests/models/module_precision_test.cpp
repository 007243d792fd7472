// training.module_precision: a quantization recipe's modules in their own precision
// (Megatron-Core quant_recipe; Megatron-Bridge's Nemotron 3 Super NVFP4 recipe keeps the
// attention projections, the latent projections and the MTP module in BF16 and the Mamba
// out_proj in MXFP8).
#include <catch2/catch.hpp>

#include <string>

#include "models/layer_ops.hpp"
#include "models/mamba_ops.hpp"
#include "support/kernel_ops.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using Catch::Matchers::Contains;

namespace {

// Nemotron 3 Super (88 blocks: Mamba-2, latent MoE and attention; one MTP module) on 64 GB200,
// one 8,192-token sequence per micro-batch on each rank.
std::string super(const std::string& precision, const std::string& extra = "") {
  return testing::scenario_text("nemotron3-super-120b-a12b", "gb200", 64, 8192, 512,
                                "  pp: 1\n  ep: 64\n  zero_stage: 1\n",
                                "  micro_batch: 1\n  precision: " + precision + "\n" + extra);
}

models::StepCosts costs_of(const scenarios::Scenario& sc) {
  return models::step_costs(sc.model, sc.training, sc.parallel, sc.gpu);
}

}  // namespace

TEST_CASE("module_precision: the attention projections in BF16 lose their quantize kernels and run BF16 GEMMs", "[models][precision]") {
  const auto nvfp4 = scenarios::load_scenario_string(super("nvfp4"), "<t>");
  const auto bf16 =
      scenarios::load_scenario_string(super("nvfp4", "  module_precision: {attention_linears: bf16}\n"), "<t>");
  const models::StepCosts a = costs_of(nvfp4), b = costs_of(bf16);
  CHECK(testing::op_named(a.part_fwd[models::qkv], "qkv.quantize") != nullptr);
  CHECK(testing::op_named(b.part_fwd[models::qkv], "qkv.quantize") == nullptr);
  CHECK(testing::op_named(b.part_fwd[models::attn_out], "attn_out.quantize") == nullptr);
  // QKV on 8,192 tokens, 4,096 wide in, (32 + 2·2) heads of 128 out: BF16 operands and output.
  const double m = 8192, k = 4096, n = 36 * 128;
  CHECK(testing::bytes_named(b.part_fwd[models::qkv], "qkv") == Approx((m * k + k * n) * 2 + m * n * 2));
  CHECK(testing::bytes_named(a.part_fwd[models::qkv], "qkv") < testing::bytes_named(b.part_fwd[models::qkv], "qkv"));
}

TEST_CASE("module_precision: the Mamba out_proj in MXFP8 inside an NVFP4 run", "[models][precision]") {
  const auto sc =
      scenarios::load_scenario_string(super("nvfp4", "  module_precision: {mamba_out_proj: mxfp8}\n"), "<t>");
  const auto o = models::mamba_mixer_ops(sc.model, sc.training, sc.parallel, sc.gpu);
  // out_proj: 8,192 tokens, 128 heads x 64 in, 4,096 out; MXFP8 operands are 1 B plus one E8M0
  // scale per 32 elements, the output BF16.
  const double m = 8192, k = 128 * 64, n = 4096;
  CHECK(testing::bytes_named(o.out_fwd, "mamba.out_proj") == Approx((m * k + k * n) * (1 + 1.0 / 32) + m * n * 2));
}

TEST_CASE("module_precision: BF16 blocks and a BF16 MTP module are the BF16 run", "[models][precision]") {
  // Every block BF16 (bf16_layers) and the MTP module BF16: nothing is left in MXFP8, so the
  // step and the memory must be the BF16 run's, through two different paths.
  const auto mixed = testing::run_text(super("mxfp8", "  bf16_layers: {first: 88}\n  module_precision: {mtp: bf16}\n"));
  const auto bf16 = testing::run_text(super("bf16"));
  CHECK(mixed.step_time_s == Approx(bf16.step_time_s).epsilon(1e-12));
  CHECK(mixed.memory.total_bytes == Approx(bf16.memory.total_bytes).epsilon(1e-12));
  // Without the MTP override the module stays MXFP8: faster than BF16.
  const auto blocks_only = testing::run_text(super("mxfp8", "  bf16_layers: {first: 88}\n"));
  CHECK(blocks_only.step_time_s < bf16.step_time_s);
}

TEST_CASE("module_precision: each module kept out of NVFP4 slows the step", "[models][precision]") {
  const double base = testing::run_text(super("nvfp4")).step_time_s;
  for (const char* module : {"attention_linears", "moe_latent_proj", "mamba_out_proj", "mtp"}) {
    INFO(module);
    const auto r = testing::run_text(super("nvfp4", std::string("  module_precision: {") + module + ": bf16}\n"));
    CHECK(r.step_time_s > base);
  }
}

TEST_CASE("module_precision: refused without a low precision, for modules the model lacks, or precisions the GPU lacks", "[models][precision]") {
  CHECK_THAT(testing::load_error_of(super("bf16", "  module_precision: {mtp: bf16}\n")),
             Contains("training.module_precision") && Contains("needs training.precision fp8, mxfp8 or nvfp4"));
  CHECK_THAT(testing::load_error_of(super("nvfp4", "  module_precision: {router: bf16}\n")),
             Contains("router") && Contains("attention_linears"));
  CHECK_THAT(testing::load_error_of(super("nvfp4", "  module_precision: {mtp: fp16}\n")),
             Contains("training.module_precision.mtp") && Contains("nvfp4"));
  CHECK_THAT(testing::load_error_of(super("nvfp4", "  module_precision: {mtp: fp8}\n")),
             Contains("training.module_precision.mtp") && Contains("fp8 needs training.precision fp8"));
  const std::string llama = testing::scenario_text("llama3-8b", "h100-sxm", 8, 8192, 64, "  pp: 1\n",
                                                   "  precision: fp8\n  module_precision: {moe_latent_proj: bf16}\n");
  CHECK_THAT(testing::load_error_of(llama), Contains("training.module_precision.moe_latent_proj") &&
                                                Contains("no latent MoE projections"));
  const std::string h100 = testing::scenario_text("llama3-8b", "h100-sxm", 8, 8192, 64, "  pp: 1\n",
                                                  "  precision: fp8\n  module_precision: {attention_linears: mxfp8}\n");
  CHECK_THAT(testing::load_error_of(h100), Contains("attention_linears") && Contains("no MXFP8 Tensor Cores"));
}

}}  // namespace CLUSTERSIM_TEST_ID
