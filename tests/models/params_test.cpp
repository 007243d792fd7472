#include <catch2/catch.hpp>

#include "models/flops.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {
scenarios::Scenario preset(const std::string& model, int seq = 2048) {
  return scenarios::load_scenario_string(testing::scenario_text(model, "h100-sxm", 8, seq, 8));
}
}  // namespace

TEST_CASE("preset parameter counts match the published model sizes", "[models]") {
  // Published totals: Llama 2 paper / HF configs; Llama 3 paper; GPT-3 paper Table 2.1.
  const std::vector<std::pair<std::string, double>> published = {
      {"llama2-7b", 6.738e9},  {"llama2-13b", 13.016e9}, {"llama2-70b", 68.977e9},
      {"llama3-8b", 8.030e9},  {"llama3-70b", 70.554e9}, {"llama3-405b", 405.85e9},
      {"gpt3-175b", 175.0e9},  {"gpt3-13b", 13.0e9},     {"gpt3-6.7b", 6.7e9},
      {"gpt3-2.7b", 2.7e9},    {"gpt3-1.3b", 1.3e9}};
  for (const auto& [name, params] : published) {
    INFO(name);
    const auto sc = preset(name);
    const double n = models::count_params(sc.model, sc.training.seq_len).total;
    // Llama configs are exact to 0.1%; GPT-3's table rounds to two significant figures.
    REQUIRE(n == Approx(params).epsilon(name.rfind("gpt3", 0) == 0 ? 0.04 : 0.001));
  }
}

TEST_CASE("megatron FLOPs per token equal 72·L·h²·(1 + s/6h + V/12hL) for GPT", "[models]") {
  const auto sc = preset("gpt3-175b");
  const double L = 96, h = 12288, s = 2048, V = 50257;
  const double expected = 72 * L * h * h * (1 + s / (6 * h) + V / (12 * h * L));
  REQUIRE(models::flops_per_token(sc.model, sc.training).model == Approx(expected).epsilon(1e-9));
}

TEST_CASE("palm FLOPs per token are 6N_non_embedding + 12·L·h·s", "[models]") {
  auto sc = preset("llama2-7b", 4096);
  sc.training.flops_formula = models::FlopsFormula::palm;
  const auto p = models::count_params(sc.model, 4096);
  REQUIRE(models::flops_per_token(sc.model, sc.training).model ==
          Approx(6 * p.non_embedding + 12.0 * 32 * 4096 * 4096));
}

TEST_CASE("full recompute adds about a third of the FLOPs (HFU/MFU ≈ 4/3)", "[models]") {
  auto sc = preset("llama2-7b", 4096);
  sc.training.recompute = models::Recompute::full;
  const auto f = models::flops_per_token(sc.model, sc.training);
  REQUIRE(f.hardware / f.model == Approx(4.0 / 3.0).epsilon(0.01));
}

}}  // namespace CLUSTERSIM_TEST_ID
