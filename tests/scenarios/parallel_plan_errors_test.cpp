// Invalid parallel plans are rejected with one line that names the key.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::scenarios;

namespace {

// Llama-3 70B (64 heads, 8 kv heads, 80 layers) on 64 GPUs with `parallelism`.
std::string plan(const std::string& parallelism, int gpus = 64, int global_batch = 64,
                 int gpus_per_node = 8) {
  return fmt::format(R"(
model: llama3-70b
hardware: h100-sxm
cluster: {{gpus: {}, gpus_per_node: {}}}
parallelism: {{{}}}
training: {{seq_len: 4096, global_batch: {}}}
)", gpus, gpus_per_node, parallelism, global_batch);
}

std::string error_of(const std::string& yaml) {
  try {
    load_scenario_string(yaml, "plan.yaml");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a valid 4D plan loads with derived dp", "[scenarios]") {
  const auto sc = load_scenario_string(plan("tp: 8, pp: 4, cp: 2, zero_stage: 1, sequence_parallel: true"));
  REQUIRE(sc.parallel.dp == 1);
  REQUIRE(sc.parallel.sequence_parallel);
  const auto inter = load_scenario_string(plan("tp: 8, pp: 4, vpp: 5"));
  REQUIRE(inter.parallel.schedule == clustersim::models::PipelineSchedule::interleaved);
  REQUIRE(load_scenario_string(plan("fsdp: true")).parallel.zero_stage == 3);
}

TEST_CASE("tp must divide heads and kv_heads", "[scenarios]") {
  const auto e = error_of(plan("tp: 16", 64, 64, 16));
  REQUIRE_THAT(e, Catch::Contains("plan.yaml") && Catch::Contains("parallelism.tp") && Catch::Contains("kv_heads (8)"));
  REQUIRE_THAT(error_of(plan("tp: 3", 48, 48)), Catch::Contains("heads (64)"));
}

TEST_CASE("tp larger than a node needs tp_across_nodes", "[scenarios]") {
  const auto e = error_of(plan("tp: 8", 64, 64, 4));
  REQUIRE_THAT(e, Catch::Contains("parallelism.tp") && Catch::Contains("tp_across_nodes"));
  REQUIRE_NOTHROW(load_scenario_string(plan("tp: 8, tp_across_nodes: true", 64, 64, 4)));
}

TEST_CASE("pp that does not divide the layers gets an automatic split unless pp_layers is given", "[scenarios]") {
  REQUIRE(load_scenario_string(plan("pp: 3", 48, 48)).parallel.pp_layers == std::vector<int>{27, 27, 26});
  REQUIRE_THAT(error_of(plan("pp: 4, vpp: 32", 64, 128)), Catch::Contains("parallelism.vpp") && Catch::Contains("exceeds"));
  REQUIRE_NOTHROW(load_scenario_string(plan("pp: 3, pp_layers: [26, 27, 27]", 48, 48)));
  REQUIRE_THAT(error_of(plan("pp: 3, pp_layers: [26, 27, 28]", 48, 48)),
               Catch::Contains("parallelism.pp_layers") && Catch::Contains("81"));
  REQUIRE_THAT(error_of(plan("pp: 3, pp_layers: [40, 40]", 48, 48)), Catch::Contains("parallelism.pp_layers"));
  // Only the stages holding the embedding or the loss may hold no layer (Megatron's pipeline layout).
  REQUIRE(load_scenario_string(plan("pp: 3, pp_layers: [0, 40, 40]", 48, 48)).parallel.pp_layers ==
          std::vector<int>{0, 40, 40});
  REQUIRE_NOTHROW(load_scenario_string(plan("pp: 3, pp_layers: [40, 40, 0]", 48, 48)));
  REQUIRE_THAT(error_of(plan("pp: 3, pp_layers: [40, 0, 40]", 48, 48)),
               Catch::Contains("parallelism.pp_layers") && Catch::Contains("virtual stage 1 holds no layer"));
}

TEST_CASE("the product of the parallel sizes must match the GPUs", "[scenarios]") {
  REQUIRE_THAT(error_of(plan("tp: 8, pp: 4, cp: 2, dp: 2")), Catch::Contains("parallelism.dp"));
  REQUIRE_THAT(error_of(plan("tp: 8, pp: 16", 64)), Catch::Contains("parallelism.tp") && Catch::Contains("tp*pp*cp = 128"));
}

TEST_CASE("the batch must split into micro-batches of every replica", "[scenarios]") {
  REQUIRE_THAT(error_of(plan("tp: 8", 64, 12)), Catch::Contains("training.global_batch"));
  // Interleaving needs micro-batches in groups of pp.
  REQUIRE_THAT(error_of(plan("tp: 8, pp: 4, vpp: 2", 64, 6)), Catch::Contains("training.global_batch") && Catch::Contains("pp (4)"));
}

TEST_CASE("schedule, vpp, fsdp and cp combinations are checked", "[scenarios]") {
  REQUIRE_THAT(error_of(plan("pp: 4, schedule: interleaved")), Catch::Contains("parallelism.schedule"));
  REQUIRE_THAT(error_of(plan("pp: 4, vpp: 2, schedule: gpipe")), Catch::Contains("parallelism.vpp"));
  REQUIRE_THAT(error_of(plan("fsdp: true, zero_stage: 1")), Catch::Contains("parallelism.fsdp"));
  REQUIRE_THAT(error_of(plan("schedule: zigzag")), Catch::Contains("parallelism.schedule"));
  REQUIRE_THAT(error_of(plan("pipline: 2")), Catch::Contains("pipline"));
}

TEST_CASE("a V schedule with fewer than one layer per chunk off rank 0 is refused on parallelism.pp", "[scenarios]") {
  auto with_layers = [](int n) {
    return fmt::format(R"(
model: {{layers: {}, hidden: 1024, heads: 16, ffn_hidden: 4096, vocab: 32000, activation: swiglu, norm: rmsnorm, position: rope}}
hardware: h100-sxm
cluster: {{gpus: 4}}
parallelism: {{pp: 4, schedule: dualpipev}}
training: {{seq_len: 2048, global_batch: 16}}
)",
                       n);
  };
  // 6 layers: rank 0 keeps only the embedding and the loss, every other rank one layer per chunk.
  REQUIRE(load_scenario_string(with_layers(6)).parallel.pp_layers == std::vector<int>{0, 1, 1, 1, 1, 1, 1, 0});
  REQUIRE_THAT(error_of(with_layers(5)), Catch::Contains("parallelism.pp:") && Catch::Contains("2·(pp − 1) = 6"));
}

TEST_CASE("a precision the GPU has no peak for is refused with the ones it has", "[scenarios][bad-input]") {
  const std::string e = error_of(
      "model: llama2-7b\nhardware: v100-sxm2\ncluster: {gpus: 8}\n"
      "training: {seq_len: 2048, global_batch: 8, precision: bf16}\n");
  CHECK(e.find("plan.yaml:") == 0);
  CHECK(e.find("training.precision: v100-sxm2 has no bf16 peak; train in a precision its profile lists: fp32, fp16") !=
        std::string::npos);
}
}}  // namespace CLUSTERSIM_TEST_ID
