// The recipes' quantization around the experts' low-precision grouped GEMMs (models/detail/
// kernel_builder.hpp): Transformer Engine's GroupedLinear quantizes each expert's split on its
// own, except delayed scaling (one multi-tensor cast-transpose) and NVFP4 (one fused split
// quantize); the per-split kernels come from one framework call, so the host pays one op and a
// raw launch for each further kernel.
#include <catch2/catch.hpp>

#include <string>

#include "models/layer_ops_host.hpp"
#include "models/mla_ops.hpp"
#include "models/moe_ops.hpp"
#include "scenarios/load.hpp"
#include "scenarios/load_model.hpp"
#include "support/kernel_ops.hpp"

namespace {
namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using hardware::Precision;

namespace {

hardware::GpuSpec b200() {
  return scenarios::load_scenario_string(
             "model: llama3-8b\nhardware: b200\ncluster: {gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n")
      .gpu;
}

models::TrainingSpec training(Precision prec, models::Fp8Recipe recipe = models::Fp8Recipe::delayed) {
  models::TrainingSpec t;
  t.seq_len = 4096;
  t.micro_batch = 1;
  t.global_batch = 8;
  t.precision = prec;
  t.fp8_recipe = recipe;
  return t;
}

// Qwen3-30B-A3B on 8 ranks: 16 local experts of 2048 -> 2x768 (SwiGLU).
models::MoeLayerOps qwen3_ops(const models::TrainingSpec& t) {
  const auto m = scenarios::model_preset("qwen3-30b-a3b");
  models::ParallelSpec p;
  p.dp = 8, p.ep = 8;
  return models::moe_layer_ops(m, t, p, {8, 1, 1}, b200(), 1.0);
}

}  // namespace

TEST_CASE("experts: BF16 quantizes nothing, low precision quantizes X, dY and W of both linears",
          "[models][moe][recipes]") {
  const auto bf16 = qwen3_ops(training(Precision::bf16));
  for (const auto* pass : {&bf16.experts_fwd, &bf16.experts_bwd})
    for (const auto& op : pass->ops) CHECK(op.name.find("quantize") == std::string::npos);
  const auto mx = qwen3_ops(training(Precision::mxfp8));
  for (const char* name :
       {"experts.fc1.quantize", "experts.fc2.quantize", "experts.fc1.weight_quantize", "experts.fc2.weight_quantize"})
    CHECK(testing::op_named(mx.experts_fwd, name) != nullptr);
  for (const char* name : {"experts.fc1.grad_quantize", "experts.fc2.grad_quantize"})
    CHECK(testing::op_named(mx.experts_bwd, name) != nullptr);
  CHECK(mx.experts_fwd.time_s > bf16.experts_fwd.time_s * 0.5);  // not free: the casts eat into FP8's gain
}

TEST_CASE("experts: per-split quantizers launch per expert, delayed scaling and NVFP4 once", "[models][moe][recipes]") {
  const double experts = 16;
  const auto mx = qwen3_ops(training(Precision::mxfp8));
  const auto cs = qwen3_ops(training(Precision::fp8, models::Fp8Recipe::tensorwise));
  const auto delayed = qwen3_ops(training(Precision::fp8, models::Fp8Recipe::delayed));
  const auto fp4 = qwen3_ops(training(Precision::nvfp4));
  REQUIRE(mx.local_experts == 16);
  const auto& x_mx = *testing::op_named(mx.experts_fwd, "experts.fc1.quantize");
  const auto& x_cs = *testing::op_named(cs.experts_fwd, "experts.fc1.quantize");
  const auto& x_delayed = *testing::op_named(delayed.experts_fwd, "experts.fc1.quantize");
  const auto& x_fp4 = *testing::op_named(fp4.experts_fwd, "experts.fc1.quantize");
  CHECK(x_mx.kernels == experts);      // one fused MXFP8 kernel per split
  CHECK(x_cs.kernels == 4 * experts);  // zero amax, amax, scale, cast, per split
  CHECK(x_delayed.kernels == 1);       // nvte_multi_cast_transpose over all splits
  CHECK(x_fp4.kernels == 2);           // global amax, then the fused split quantize
  // Same tokens, same traffic per element whatever the launch count: current scaling reads the
  // tensor twice.
  const double elements = mx.tokens_per_expert * experts * 2048;
  CHECK(x_delayed.bytes == Approx(elements * 4.0));  // read 2 B, write 1 B in two orientations
  CHECK(x_cs.bytes == Approx(elements * 6.0));
  // 64 small kernels take longer than one kernel over the same bytes.
  CHECK(x_cs.time_s > x_delayed.time_s * 1.5);
}

TEST_CASE("experts: a C++ loop of quantize kernels costs the host one op plus raw launches", "[models][moe][recipes]") {
  const auto cs = qwen3_ops(training(Precision::fp8, models::Fp8Recipe::tensorwise));
  const auto& q = *testing::op_named(cs.experts_fwd, "experts.fc1.quantize");
  REQUIRE(q.kernels == 64);
  CHECK(q.loop_launches == 63);
  CHECK(models::host_op_units(q) > 1.0);
  CHECK(models::host_op_units(q) < 0.25 * q.kernels);
  models::KernelOp plain = q;
  plain.loop_launches = 0;
  CHECK(models::host_op_units(plain) == Approx(64.0));
}

TEST_CASE("experts: weights are quantized once per step, spread over its micro-batches", "[models][moe][recipes]") {
  auto one = training(Precision::mxfp8);
  auto eight = one;
  eight.global_batch = 64;  // 8 micro-batches per rank at dp 8
  const auto ops1 = qwen3_ops(one), ops8 = qwen3_ops(eight);
  const auto& w1 = *testing::op_named(ops1.experts_fwd, "experts.fc1.weight_quantize");
  const auto& w8 = *testing::op_named(ops8.experts_fwd, "experts.fc1.weight_quantize");
  CHECK(w8.time_s == Approx(w1.time_s / 8));
  // 16 experts' [2048, 2x768] weights: read 2 B, write both orientations with their block scales.
  CHECK(w1.bytes == Approx(16 * 2048.0 * 2 * 768 * (2 + 2 * hardware::gemm_operand_bytes(Precision::mxfp8))));
  CHECK(w1.kernels == 0);                   // no launch in the micro-batch's host timeline
  CHECK(models::host_op_units(w1) == 0.0);  // and no host time, not a negative one
  const auto cs = qwen3_ops(training(Precision::fp8, models::Fp8Recipe::tensorwise));
  CHECK(models::host_op_units(*testing::op_named(cs.experts_fwd, "experts.fc2.weight_quantize")) == 0.0);
}

TEST_CASE("MLA projections quantize their inputs under MXFP8 as the dense layers do", "[models][mla][recipes]") {
  const auto m = scenarios::model_preset("deepseek-v3");
  models::ParallelSpec p;
  p.dp = 8;
  const auto bf16 = models::mla_attention_ops(m, training(Precision::bf16), p, b200());
  const auto mx = models::mla_attention_ops(m, training(Precision::mxfp8), p, b200());
  CHECK(testing::op_named(bf16.fwd, "mla.q_down.quantize") == nullptr);
  REQUIRE(testing::op_named(mx.fwd, "mla.q_down.quantize") != nullptr);
  CHECK(testing::op_named(mx.fwd, "mla.q_down.quantize")->kernels == 1);
  CHECK(testing::op_named(mx.bwd, "mla.o.grad_quantize") != nullptr);
}

}  // namespace CLUSTERSIM_TEST_ID
}  // namespace
