// ZeRO-2/3 combined with pipeline parallelism follow PyTorch's pipelining with FSDP (torchtitan):
// gradients are reduce-scattered in the last micro-batch's backward only, ZeRO-3 parameters are
// gathered once per step at their first forward (torchtitan's default; fsdp_reshard_after_forward
// overrides it), and weights and gradients stay unsharded for the step. Without pipeline
// parallelism, FSDP / ZeRO-3 gathers and reduce-scatters for every micro-batch.
#include <catch2/catch.hpp>

#include <string>

#include "models/memory.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

struct Counts {
  int gathers = 0, reduces = 0;
};

// DP collective phases on stage 0 over one step (timeline = kernel-level graph).
Counts dp_collectives(int pp, int zero, int global_batch, const std::string& reshard = "") {
  std::vector<std::string> sets = {"parallelism.pp=" + std::to_string(pp), "parallelism.zero_stage=" + std::to_string(zero)};
  if (!reshard.empty()) sets.push_back("parallelism.fsdp_reshard_after_forward=" + reshard);
  const auto sc = scenarios::load_scenario_string(
      testing::scenario_text("llama3-8b", "h100-sxm", 32, 2048, global_batch, "", "  micro_batch: 1\n"), "<test>", sets);
  std::vector<models::TimelineEntry> timeline;
  scenarios::simulate(sc, &timeline);
  Counts c;
  for (const auto& e : timeline) {
    if (e.stage != 0) continue;
    c.gathers += e.kind == models::TaskKind::dp_param_gather;
    c.reduces += e.kind == models::TaskKind::dp_grad_reduce;
  }
  return c;
}

}  // namespace

TEST_CASE("ZeRO-3 with pipeline parallelism gathers and reduce-scatters once per step", "[step][zero]") {
  // 32 GPUs, pp 2 → dp 16: global batch 32 is 2 micro-batches per rank, 128 is 8.
  const Counts few = dp_collectives(2, 3, 32), many = dp_collectives(2, 3, 128);
  CHECK(few.gathers > 0);
  CHECK(few.reduces > 0);
  CHECK(many.gathers == few.gathers);
  CHECK(many.reduces == few.reduces);
}

TEST_CASE("ZeRO-3 without pipeline parallelism gathers for every micro-batch", "[step][zero]") {
  // pp 1 → dp 32: global batch 64 is 2 micro-batches per rank, 256 is 8.
  const Counts few = dp_collectives(1, 3, 64), many = dp_collectives(1, 3, 256);
  CHECK(many.gathers > 3 * few.gathers);
  CHECK(many.reduces > 3 * few.reduces);
}

TEST_CASE("ZeRO-2 reduce-scatters every micro-batch alone, the last one only under pipelining", "[step][zero]") {
  CHECK(dp_collectives(1, 2, 256).reduces > 3 * dp_collectives(1, 2, 64).reduces);
  CHECK(dp_collectives(2, 2, 128).reduces == dp_collectives(2, 2, 32).reduces);
}

TEST_CASE("with pipeline parallelism ZeRO-3 holds the stage's weights and gradients for the step", "[memory][zero]") {
  auto memory = [](int pp, int zero) {
    const auto sc = scenarios::load_scenario_string(
        testing::scenario_text("llama3-8b", "h100-sxm", 32, 2048, 128, "", "  micro_batch: 1\n"), "<test>",
        {"parallelism.pp=" + std::to_string(pp), "parallelism.zero_stage=" + std::to_string(zero)});
    return models::estimate_memory(sc.model, sc.training, sc.parallel, sc.gpu);
  };
  const auto z1 = memory(2, 1), z3 = memory(2, 3), alone = memory(1, 3);
  CHECK(z3.weights_bytes == Approx(z1.weights_bytes));
  CHECK(z3.gradients_bytes == Approx(z1.gradients_bytes));
  CHECK(z3.optimizer_bytes == Approx(z1.optimizer_bytes));
  CHECK(alone.weights_bytes < 0.2 * memory(1, 1).weights_bytes);  // sharded when not pipelined
}

TEST_CASE("fsdp_reshard_after_forward overrides the default in both directions", "[step][zero]") {
  // Resharding under pipelining gathers again for every micro-batch; gradients still wait for
  // the last one.
  const Counts always_few = dp_collectives(2, 3, 32, "always"), always_many = dp_collectives(2, 3, 128, "always");
  CHECK(always_many.gathers > 3 * always_few.gathers);
  CHECK(always_many.reduces == always_few.reduces);
  // Keeping parameters without pipelining gathers once; gradients are still reduce-scattered
  // every micro-batch.
  const Counts never_few = dp_collectives(1, 3, 64, "never"), never_many = dp_collectives(1, 3, 256, "never");
  CHECK(never_many.gathers == never_few.gathers);
  CHECK(never_many.reduces > 3 * never_few.reduces);
}

TEST_CASE("fsdp_reshard_after_forward without ZeRO-3 is refused with the reason", "[scenarios][zero]") {
  const std::string yaml = testing::scenario_text("llama3-8b", "h100-sxm", 32, 2048, 64,
                                                  "  zero_stage: 1\n  fsdp_reshard_after_forward: never\n");
  CHECK_THROWS_WITH(scenarios::load_scenario_string(yaml, "<test>"),
                    Catch::Contains("fsdp_reshard_after_forward") && Catch::Contains("ZeRO-3"));
  CHECK_THROWS_WITH(scenarios::load_scenario_string(testing::scenario_text("llama3-8b", "h100-sxm", 32, 2048, 64,
                                                                           "  fsdp: true\n  fsdp_reshard_after_forward: sometimes\n"),
                                                    "<test>"),
                    Catch::Contains("always") && Catch::Contains("never"));
}

}}  // namespace CLUSTERSIM_TEST_ID
