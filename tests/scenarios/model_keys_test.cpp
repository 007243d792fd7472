// model.norm / bias / qkv_bias / dropout / head_dim / activation and the MoE, MLA, sliding-window
// and MTP keys: what they change, and the exit-2 errors that name the key.
#include <catch2/catch.hpp>

#include <fstream>

#include "models/flops.hpp"
#include "scenarios/error.hpp"
#include "scenarios/load_model.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

std::string scenario(const std::string& model) {
  return "name: t\nmodel: " + model + "\nhardware: h100-sxm\ncluster: {gpus: 8}\ntraining: {seq_len: 2048, global_batch: 8}\n";
}

std::string load_error(const std::string& model) {
  try {
    scenarios::load_scenario_string(scenario(model), "m.yaml");
  } catch (const scenarios::ScenarioError& e) {
    return e.what();
  }
  return "";
}

const char* kDense = "{layers: 4, hidden: 1024, heads: 8, ffn_hidden: 4096, vocab: 1000, activation: swiglu";

}  // namespace

TEST_CASE("MoE, MLA, sliding-window and MTP keys: inconsistent values are errors naming the key", "[scenarios][moe]") {
  const std::string d = kDense;
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {d + ", moe: {experts: 8, top_k: 9, expert_ffn_hidden: 512}}",
       {"m.yaml:2", "model.moe.top_k", "more than the 8"}},
      {d + ", moe: {experts: 8, top_k: 2}}", {"model.moe.expert_ffn_hidden", "is required"}},
      {d + ", moe: {experts: 8, top_k: 2, expert_ffn_hidden: 512, topk: 3}}", {"model.moe"}},
      {d + ", moe: {experts: 8, top_k: 2, expert_ffn_hidden: 512, dense_layers: 4}}",
       {"model.moe.dense_layers", "0..3"}},
      {d + ", moe: {experts: 8, top_k: 2, expert_ffn_hidden: 512, capacity_factor: 0.5}}",
       {"model.moe.capacity_factor"}},
      {d + ", moe: {experts: 8, top_k: 2, expert_ffn_hidden: 512, router_groups: 3}}",
       {"model.moe.router_groups", "does not divide the 8"}},
      {d + ", moe: {experts: 8, top_k: 2, expert_ffn_hidden: 512, router_group_top_k: 2}}",
       {"model.moe.router_group_top_k", "needs model.moe.router_groups"}},
      {d + ", moe: {experts: 8, top_k: 3, expert_ffn_hidden: 512, router_groups: 4, router_group_top_k: 2}}",
       {"model.moe.router_group_top_k", "does not divide top_k 3"}},
      {d + ", moe: {experts: 8, top_k: 2, expert_ffn_hidden: 512, router_groups: 4, router_group_top_k: 5}}",
       {"model.moe.router_group_top_k", "out of range"}},
      {d + ", kv_heads: 8, mla: {kv_lora_rank: 64, qk_nope_head_dim: 64, qk_rope_head_dim: 32, v_head_dim: 64}}",
       {"model.kv_heads", "model.mla"}},
      {d + ", mla: {kv_lora_rank: 64, qk_rope_head_dim: 32, v_head_dim: 64}}",
       {"model.mla.qk_nope_head_dim", "is required"}},
      {d + ", sliding_window: {every: 2}}", {"model.sliding_window.tokens", "is required"}},
      {d + ", bias: true, qkv_bias: false}", {"model.qkv_bias"}},
      {d + ", norm: batchnorm}", {"model.norm", "layernorm, rmsnorm"}},
      {d + ", dropout: 1.5}", {"model.dropout", "out of range"}},
      {"{layers: 4, hidden: 1024, heads: 8, ffn_hidden: 4096, vocab: 1000, activation: silu}",
       {"model.activation", "gelu, swiglu, relu2, geglu"}},
      {"{layers: 4, hidden: 1000, heads: 16, ffn_hidden: 4096, vocab: 1000}", {"model.heads", "head_dim"}},
  };
  for (const auto& [model, expected] : cases) {
    INFO(model);
    const std::string e = load_error(model);
    for (const auto& s : expected) REQUIRE_THAT(e, Catch::Contains(s));
  }
}

TEST_CASE("MoE, MLA, sliding-window and MTP models simulate, each differing from its dense stand-in", "[scenarios][moe]") {
  const std::string d = kDense;
  const auto dense = testing::run_text(scenario(d + "}"));
  for (const std::string extra : {", moe: {experts: 8, top_k: 2, expert_ffn_hidden: 1024}}",
                                  ", mla: {kv_lora_rank: 64, qk_nope_head_dim: 64, qk_rope_head_dim: 32, v_head_dim: 64}}",
                                  ", sliding_window: {tokens: 128}}", ", mtp_layers: 1}"}) {
    INFO(extra);
    const auto r = testing::run_text(scenario(d + extra));
    CHECK(r.step_time_s > 0);
    CHECK(r.step_time_s != dense.step_time_s);
  }
  // A sliding window shortens attention; an MTP module adds a block and a head.
  CHECK(testing::run_text(scenario(d + ", sliding_window: {tokens: 128}}")).step_time_s < dense.step_time_s);
  CHECK(testing::run_text(scenario(d + ", mtp_layers: 1}")).step_time_s > dense.step_time_s);
  const std::string path = "/tmp/clustersim_moe_run.yaml";
  std::ofstream(path) << scenario("mixtral-8x7b");
  const auto r = testing::run_command(std::string(CLUSTERSIM_BINARY) + " run " + path + " 2>&1");
  REQUIRE_THAT(r.out, Catch::Contains("exposed EP communication") && Catch::Contains("dispatcher"));
}

TEST_CASE("explicit norm, bias and dropout equal to the activation's defaults change nothing", "[scenarios][moe]") {
  const auto base = testing::run_text(scenario("gpt3-1.3b"));
  // The preset states layernorm, bias and dropout 0.1; an inline model that omits them gets them.
  const auto inline_gpt = testing::run_text(scenario(
      "{layers: 24, hidden: 2048, heads: 16, ffn_hidden: 8192, vocab: 50257, activation: gelu, tied_embeddings: true}"));
  REQUIRE(inline_gpt.step_time_s == base.step_time_s);
  REQUIRE(inline_gpt.memory.total_bytes == base.memory.total_bytes);
  REQUIRE(inline_gpt.params.total == base.params.total);
}

TEST_CASE("dropout masks cost memory and traffic only with dropout > 0", "[scenarios][moe]") {
  // Korthikanti et al. 2022 eq. 1 counts two 1-byte s·b·h hidden dropout masks per layer (the
  // attention-probability mask is gone with flash attention).
  const auto with = testing::run_text(scenario("gpt3-1.3b"));
  const auto without = testing::run_text(scenario("gpt3-1.3b"), {"model.dropout=0"});
  const double masks = 2.0 * 2048 * 1 * 2048;  // s · b · h bytes, twice
  const int in_flight = with.memory.layers_in_flight;
  REQUIRE(with.memory.activations_bytes - without.memory.activations_bytes == Approx(in_flight * masks));
  REQUIRE(without.step_time_s < with.step_time_s);
}

TEST_CASE("biases, norms, head_dim and activations change the parameter count as the architecture says", "[scenarios][moe]") {
  auto m = scenarios::model_preset("llama2-7b");
  const double h = m.hidden, f = m.ffn_hidden, L = m.layers;
  const double base = models::count_params(m, 4096).total;
  auto with = [&](auto change) {
    auto c = m;
    change(c);
    return models::count_params(c, 4096).total - base;
  };
  // Qwen2-style QKV bias: h + 2·h (32 kv heads of 128) per layer.
  REQUIRE(with([](auto& c) { c.qkv_bias = true; }) == Approx(L * 3 * h));
  // Biases everywhere: QKV 3h, output h, gate and up 2f, down h.
  REQUIRE(with([](auto& c) { c.bias = true; }) == Approx(L * (3 * h + h + 2 * f + h)));
  // LayerNorm adds a bias to each of the 2L + 1 norms.
  REQUIRE(with([](auto& c) { c.norm = models::Norm::layernorm; }) == Approx((2 * L + 1) * h));
  // Non-gated squared ReLU drops the gate matrix; GeGLU keeps three.
  REQUIRE(with([](auto& c) { c.activation = models::Activation::relu2; }) == Approx(-L * h * f));
  REQUIRE(with([](auto& c) { c.activation = models::Activation::geglu; }) == 0);
  // head_dim 256 doubles the query/key/value/output widths (Gemma style: heads·d ≠ h).
  REQUIRE(with([](auto& c) { c.head_size = 256; }) == Approx(L * 4 * h * h));
}

TEST_CASE("relu2 and geglu models simulate with their own activation kernels", "[scenarios][moe]") {
  const std::string d = "{layers: 4, hidden: 1024, heads: 8, ffn_hidden: 4096, vocab: 1000, activation: ";
  for (const char* act : {"relu2", "geglu"}) {
    const auto r = testing::run_text(scenario(d + act + "}"));
    bool found = false;
    for (const auto& op : r.costs.layer_fwd.ops) found = found || op.name == act;
    INFO(act);
    REQUIRE(found);
    REQUIRE(r.step_time_s > 0);
  }
  // Squared ReLU is non-gated: its MLP has 2/3 of the gated FLOPs.
  const auto relu2 = testing::run_text(scenario(d + "relu2}"));
  const auto geglu = testing::run_text(scenario(d + "geglu}"));
  REQUIRE(relu2.params.total < geglu.params.total);
}

}}  // namespace CLUSTERSIM_TEST_ID
