// pp·vpp that does not divide the layers: the loader splits them (Megatron's embedding/loss rule
// or balanced) and the simulation equals the same split given as parallelism.pp_layers.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

#include "models/pipeline.hpp"
#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

std::vector<int> llama3_405b_pp16() {  // Dubey et al. 2024, §3.3.2: one layer fewer on the first and last stages
  std::vector<int> v(16, 8);
  v.front() = v.back() = 7;
  return v;
}

scenarios::Scenario gpt(const std::string& parallelism, int layers, int gpus, int global_batch) {
  return scenarios::load_scenario_string(fmt::format(R"(
model: {{layers: {}, hidden: 1024, heads: 8, ffn_hidden: 4096, vocab: 1024, activation: gelu}}
hardware: h100-sxm
cluster: {{gpus: {}}}
parallelism: {{{}}}
training: {{seq_len: 1024, global_batch: {}, micro_batch: 1}}
)", layers, gpus, parallelism, global_batch), "<test>");
}

}  // namespace

TEST_CASE("126 layers over pp 16 split as Megatron's account_for_embedding/loss", "[scenarios][pipeline]") {
  const auto s = models::uneven_stage_layers(126, 16);
  REQUIRE(s.megatron);
  REQUIRE(s.layers == llama3_405b_pp16());
  const auto sc = scenarios::load_scenario_string(R"(
model: llama3-405b
hardware: h100-sxm
cluster: {gpus: 2048}
parallelism: {tp: 8, pp: 16}
training: {seq_len: 8192, global_batch: 256}
)", "<test>");
  REQUIRE(sc.parallel.pp_layers == llama3_405b_pp16());
  REQUIRE_THAT(models::describe_split(126, sc.parallel), Catch::Contains("account_for_embedding/loss"));
}

TEST_CASE("a split Megatron's rule cannot make even is balanced, extra layers in the middle", "[scenarios][pipeline]") {
  // 30 over 4: (30 + 2) / 4 = 8, so [7, 8, 8, 7], also the most balanced split.
  REQUIRE(models::uneven_stage_layers(30, 4).layers == std::vector<int>{7, 8, 8, 7});
  for (auto [layers, stages] : {std::pair{29, 4}, {31, 4}, {29, 8}, {81, 10}, {30, 7}}) {
    const auto s = models::uneven_stage_layers(layers, stages);
    INFO(layers << " layers over " << stages << " stages");
    REQUIRE_FALSE(s.megatron);
    REQUIRE(int(s.layers.size()) == stages);
    REQUIRE(std::accumulate(s.layers.begin(), s.layers.end(), 0) == layers);
    const auto [lo, hi] = std::minmax_element(s.layers.begin(), s.layers.end());
    REQUIRE(*hi - *lo == 1);
    // The remainder is below the stage count, so the last stage (it computes the loss) never takes one.
    REQUIRE(s.layers.back() == *lo);
  }
  REQUIRE(models::uneven_stage_layers(29, 4).layers == std::vector<int>{7, 8, 7, 7});
  REQUIRE(models::uneven_stage_layers(31, 4).layers == std::vector<int>{8, 8, 8, 7});
  REQUIRE(models::uneven_stage_layers(3, 4).layers.empty());
  models::ParallelSpec p;
  p.pp = 4;
  p.pp_layers = {7, 8, 7, 7};
  REQUIRE_THAT(models::describe_split(29, p), Catch::Contains("as evenly as possible"));
  p.pp_layers = {8, 7, 7, 7};
  REQUIRE(models::describe_split(29, p) == "as given in parallelism.pp_layers");
}

TEST_CASE("more pipeline stages than layers is an error naming the key", "[scenarios][pipeline]") {
  try {
    gpt("pp: 4, vpp: 2", 6, 4, 8);
    FAIL("loaded");
  } catch (const scenarios::ScenarioError& e) {
    REQUIRE_THAT(e.what(), Catch::Contains("parallelism.vpp") && Catch::Contains("exceeds"));
  }
}

TEST_CASE("an automatic uneven split simulates as the same split given explicitly", "[scenarios][pipeline]") {
  for (const std::string par : {"pp: 4", "pp: 2, vpp: 2"}) {
    const auto automatic = scenarios::simulate(gpt(par, 13, 4, 8));
    const auto& split = automatic.scenario.parallel.pp_layers;
    REQUIRE(split.size() == 4);
    const auto given = scenarios::simulate(gpt(fmt::format("{}, pp_layers: [{}]", par, fmt::join(split, ", ")), 13, 4, 8));
    INFO(par);
    REQUIRE(automatic.step_time_s == given.step_time_s);
    REQUIRE(automatic.memory.total_bytes == given.memory.total_bytes);
  }
}

// DeepSeek-V3: 61 layers and one MTP module over 16 stages. The MTP module runs a block and the LM
// head again on the last stage (2 layer-equivalents), so the last stage takes 2 layers fewer than
// an even split of 63 would give it; with no MTP the split is unchanged.
TEST_CASE("MTP modules lighten the last stages of the automatic split", "[scenarios][pipeline]") {
  const auto s = models::uneven_stage_layers(61, 16, models::mtp_layer_equivalents(1));
  REQUIRE(s.last_lightened);
  std::vector<int> expect(16, 4);
  expect.back() = 1;
  CHECK(s.layers == expect);
  CHECK(models::uneven_stage_layers(61, 16, 0).layers == models::uneven_stage_layers(61, 16).layers);
  CHECK(models::uneven_stage_layers(61, 16, 0).layers.back() == 3);
  // Every stage keeps at least one layer and the layers still add up.
  const auto tight = models::uneven_stage_layers(5, 4, 4);
  CHECK(tight.layers == std::vector<int>{2, 1, 1, 1});
  // The loader applies it even when pp divides the layers (64 layers, pp 16, one MTP module).
  CHECK(models::automatic_split(64, 16, 2));
  CHECK_FALSE(models::automatic_split(64, 16, 0));
  models::ParallelSpec p;
  p.pp = 16;
  p.pp_layers = s.layers;
  CHECK_THAT(models::describe_split(61, p, 2), Catch::Contains("MTP modules"));
}

}}  // namespace CLUSTERSIM_TEST_ID
