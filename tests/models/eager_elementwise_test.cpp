#include <catch2/catch.hpp>

#include "models/layer_ops.hpp"
#include "scenarios/load.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

scenarios::Scenario load(const std::string& model, bool fused) {
  return scenarios::load_scenario_string("model: " + model + R"(
hardware: h100-sxm
cluster: {gpus: 8}
training: {seq_len: 4096, global_batch: 8, fused_elementwise: )" + (fused ? "true" : "false") + "}\n",
                                         "<test>");
}

models::KernelOp op(const models::PassCost& pc, const std::string& name) {
  for (const auto& o : pc.ops)
    if (o.name == name) return o;
  FAIL("no op " << name);
  return {};
}

models::StepCosts costs(const scenarios::Scenario& sc) {
  return models::step_costs(sc.model, sc.training, sc.parallel, sc.gpu);
}

}  // namespace

TEST_CASE("eager PyTorch runs the reference RMSNorm, RoPE and SwiGLU unfused", "[models]") {
  const auto fused = costs(load("llama2-7b", true)), eager = costs(load("llama2-7b", false));
  CHECK(op(eager.layer_fwd, "norm1").bytes == Approx(9 * op(fused.layer_fwd, "norm1").bytes));
  CHECK(op(eager.layer_fwd, "rotary").bytes == Approx(5 * op(fused.layer_fwd, "rotary").bytes));
  CHECK(op(eager.layer_fwd, "swiglu").bytes == Approx(10.0 / 6.0 * op(fused.layer_fwd, "swiglu").bytes));
  CHECK(op(eager.head_bwd, "final_norm.bwd").bytes == Approx(9 * op(fused.head_bwd, "final_norm.bwd").bytes));
  // GEMMs are untouched; the layer gets slower by the extra traffic only.
  CHECK(op(eager.layer_fwd, "qkv").time_s == op(fused.layer_fwd, "qkv").time_s);
  CHECK(eager.layer_fwd.time_s > 1.1 * fused.layer_fwd.time_s);
}

TEST_CASE("GPT blocks (LayerNorm, GELU, learned positions) are single kernels in eager mode too", "[models]") {
  const auto fused = costs(load("gpt3-1.3b", true)), eager = costs(load("gpt3-1.3b", false));
  CHECK(eager.layer_fwd.time_s == Approx(fused.layer_fwd.time_s));
  CHECK(eager.layer_bwd.time_s == Approx(fused.layer_bwd.time_s));
}

}}  // namespace CLUSTERSIM_TEST_ID
