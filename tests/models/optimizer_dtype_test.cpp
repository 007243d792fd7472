// training.optimizer_dtype: fp32 master weights and Adam moments (12 B per parameter beyond the
// BF16 weights) or, as NeMo AutoModel runs by default, BF16 parameters with BF16 moments and no
// master (4 B): the memory model, the optimizer step's traffic and the checkpoint follow it.
#include <catch2/catch.hpp>

#include "models/memory.hpp"
#include "models/reliability.hpp"
#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {
scenarios::Scenario dense(const std::string& extra_training, int zero) {
  return scenarios::load_scenario_string(
      "model: llama3-8b\nhardware: h100-sxm\ncluster: {gpus: 8}\nparallelism: {zero_stage: " + std::to_string(zero) +
          "}\ntraining: {seq_len: 2048, global_batch: 8, micro_batch: 1" + extra_training + "}\n",
      "<test>");
}
}  // namespace

TEST_CASE("bf16 optimizer state: a third of the optimizer bytes, the FSDP shard becomes the BF16 weight", "[memory]") {
  for (int zero : {1, 3}) {
    INFO("zero_stage " << zero);
    const auto fp32 = dense("", zero), bf16 = dense(", optimizer_dtype: bf16", zero);
    const auto a = models::estimate_memory(fp32.model, fp32.training, fp32.parallel, fp32.gpu);
    const auto b = models::estimate_memory(bf16.model, bf16.training, bf16.parallel, bf16.gpu);
    CHECK(b.optimizer_bytes == Approx(a.optimizer_bytes * 4.0 / 12.0));
    // ZeRO-3 (FSDP): the 12-byte state held the fp32 shard; without it the shard is a BF16 weight,
    // 2 B per parameter over the 8 ranks, on top of the blocks gathered at a time.
    if (zero == 3) CHECK(b.weights_bytes - a.weights_bytes == Approx(2.0 * a.optimizer_bytes / 12.0).epsilon(0.02));
    else CHECK(b.weights_bytes == Approx(a.weights_bytes));
    CHECK(b.gradients_bytes <= a.gradients_bytes);
  }
  // The optimizer step reads and writes 16 B per parameter instead of 34.
  const auto fp32 = dense("", 1), bf16 = dense(", optimizer_dtype: bf16", 1);
  CHECK(bf16.training.adam_traffic_bytes_per_param() == 16.0);
  CHECK(scenarios::simulate(bf16).step.breakdown.optimizer_s < scenarios::simulate(fp32).step.breakdown.optimizer_s);
  models::ParamCount p;
  p.total = 1e9;
  CHECK(models::checkpoint_bytes(p, hardware::Precision::bf16, false) == 6e9);
}

TEST_CASE("optimizer_dtype: bf16 with fp32 training is refused naming the key", "[memory][scenario]") {
  CHECK_THROWS_WITH(dense(", precision: fp32, optimizer_dtype: bf16", 1), Catch::Contains("optimizer_dtype"));
  CHECK_THROWS_WITH(dense(", optimizer_dtype: fp16", 1), Catch::Contains("optimizer_dtype"));
}

}}  // namespace CLUSTERSIM_TEST_ID
