// training.cross_entropy: the loss on an FP32 copy of the logits, or one fused kernel on the
// logits in their own dtype (flash-attn's xentropy, Transformer Engine's parallel_cross_entropy).
#include <catch2/catch.hpp>

#include <string>

#include "models/layer_ops.hpp"
#include "support/kernel_ops.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using Catch::Matchers::Contains;

namespace {

// Llama-3 8B on 8 H100, no pipeline: the one stage holds the loss; 4096 tokens per micro-batch.
std::string llama8b(const std::string& loss) {
  return testing::scenario_text("llama3-8b", "h100-sxm", 8, 4096, 8, "  pp: 1\n",
                                "  micro_batch: 1\n" + (loss.empty() ? "" : "  cross_entropy: " + loss + "\n"));
}

}  // namespace

TEST_CASE("cross_entropy: fp32 by default, fused on request, anything else refused", "[models][loss]") {
  CHECK(scenarios::load_scenario_string(llama8b(""), "<t>").training.cross_entropy == models::CrossEntropy::fp32);
  CHECK(scenarios::load_scenario_string(llama8b("fused"), "<t>").training.cross_entropy == models::CrossEntropy::fused);
  CHECK_THAT(testing::load_error_of(llama8b("liger")),
             Contains("training.cross_entropy") && Contains("fp32") && Contains("fused"));
}

TEST_CASE("cross_entropy: the FP32 copy is 4 B more per logit at the loss, and the fused kernel's bytes", "[models][loss]") {
  const double logits = 4096.0 * 128256;  // tokens x vocabulary (not padded at tp 1)
  const auto fp32 = testing::run_text(llama8b("fp32")), fused = testing::run_text(llama8b("fused"));
  CHECK(fp32.memory.logits_bytes == Approx(logits * (2 + 4)));
  CHECK(fused.memory.logits_bytes == Approx(logits * 2));
  const auto sc = scenarios::load_scenario_string(llama8b("fused"), "<t>");
  const models::StepCosts c = models::step_costs(sc.model, sc.training, sc.parallel, sc.gpu);
  CHECK(testing::bytes_named(c.head_fwd, "cross_entropy") == Approx(logits * 2 * 2));  // two passes over BF16 logits
  CHECK(testing::bytes_named(c.head_bwd, "cross_entropy.bwd") ==
        Approx(logits * 2 * 2));  // read them, write the gradient
  CHECK(fused.step_time_s < fp32.step_time_s);
}

}}  // namespace CLUSTERSIM_TEST_ID
