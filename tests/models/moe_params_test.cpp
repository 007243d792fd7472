#include <catch2/catch.hpp>

#include "models/flops.hpp"
#include "scenarios/load_model.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

struct Published {
  const char* preset;
  double total;
  double active;           // 0: not published
  bool active_without_embedding;  // the source counts active parameters without the input embedding
  double tolerance;
};

models::TrainingSpec training(int seq_len) {
  models::TrainingSpec t;
  t.seq_len = seq_len;
  return t;
}

}  // namespace

TEST_CASE("MoE preset parameter counts match the published total and active counts", "[models][moe]") {
  // Sources (also in each preset's header): DeepSeek-V3 arXiv 2412.19437 §4.2 (671B / 37B);
  // DeepSeek-V2 arXiv 2405.04434 §3.1.2 (236B / 21B); Kimi K2 arXiv 2507.20534 (1.04T / 32.6B);
  // Qwen3 arXiv 2505.09388 Table 2 (30.5B / 3.3B, 235B / 22B); Mistral AI blog posts
  // (Mixtral 8x7B 46.7B / 12.9B, 8x22B 141B / 39B); Meta Llama 4 model card (Scout 109B / 17B,
  // Maverick 400B / 17B, totals with the vision encoder); OpenAI gpt-oss model card Table 1
  // (116.83B / 5.13B and 20.91B / 3.61B, active without the embedding table); xAI Grok-1
  // release (314B). Tolerances: 1 % where the source gives three or more digits, 2 % where it
  // rounds (37B, 21B, 1.04T, 3.3B) or counts parts the text model lacks (Llama 4 vision tower).
  const std::vector<Published> published = {
      {"deepseek-v3", 671e9, 37e9, false, 0.02},      {"deepseek-v2", 236e9, 21e9, false, 0.02},
      {"kimi-k2", 1.04e12, 32.6e9, false, 0.02},      {"qwen3-30b-a3b", 30.5e9, 3.3e9, false, 0.02},
      {"qwen3-235b-a22b", 235e9, 22e9, false, 0.01},  {"mixtral-8x7b", 46.7e9, 12.9e9, false, 0.01},
      {"mixtral-8x22b", 141e9, 39e9, false, 0.01},    {"llama4-scout", 109e9, 17e9, false, 0.02},
      {"llama4-maverick", 400e9, 17e9, false, 0.02},  {"gpt-oss-120b", 116.83e9, 5.13e9, true, 0.01},
      {"gpt-oss-20b", 20.91e9, 3.61e9, true, 0.01},   {"grok-1", 314e9, 0, false, 0.01}};
  for (const auto& row : published) {
    INFO(row.preset);
    const auto m = scenarios::model_preset(row.preset);
    const auto p = models::count_params(m, 4096);
    CHECK(p.total == Approx(row.total).epsilon(row.tolerance));
    if (row.active > 0) {
      const double active = row.active_without_embedding ? p.active - p.embedding : p.active;
      CHECK(active == Approx(row.active).epsilon(row.tolerance));
    }
    CHECK(p.active < p.total);
    CHECK(p.experts < p.total);
  }
}

TEST_CASE("DeepSeek-V3's checkpoint is the main model plus the MTP module with its own embedding and head", "[models][moe]") {
  // HF deepseek-ai/DeepSeek-V3 model card: 685B = 671B main model + 14B MTP module; the
  // checkpoint's MTP layer stores embed_tokens and shared_head.head again.
  const auto m = scenarios::model_preset("deepseek-v3");
  const auto p = models::count_params(m, 4096);
  const double copies = 2.0 * m.vocab * m.hidden;
  REQUIRE(p.mtp + copies == Approx(14e9).epsilon(0.05));
  REQUIRE(p.total + p.mtp + copies == Approx(685e9).epsilon(0.005));
}

TEST_CASE("dense presets have every parameter active and no experts", "[models][moe]") {
  for (const char* name : {"llama3-8b", "llama2-70b", "gpt3-175b"}) {
    INFO(name);
    const auto p = models::count_params(scenarios::model_preset(name), 2048);
    REQUIRE(p.active == p.total);
    REQUIRE(p.active_matmul == p.matmul);
    REQUIRE(p.experts == 0);
    REQUIRE(p.mtp == 0);
  }
}

TEST_CASE("layer kinds: leading dense layers, interleaved MoE layers and sliding-window layers", "[models][moe]") {
  const auto v3 = scenarios::model_preset("deepseek-v3");  // first_k_dense_replace 3
  for (int i = 0; i < 3; ++i) REQUIRE_FALSE(v3.moe_layer(i));
  for (int i = 3; i < v3.layers; ++i) REQUIRE(v3.moe_layer(i));
  REQUIRE(v3.moe_layer_count() == 58);
  // HF Llama 4: moe_layers = range(interleave_moe_layer_step - 1, layers, step) → 1, 3, ..., 47.
  const auto maverick = scenarios::model_preset("llama4-maverick");
  for (int i = 0; i < maverick.layers; ++i) REQUIRE(maverick.moe_layer(i) == (i % 2 == 1));
  // gpt-oss: half of the 36 layers attend to a 128-token window.
  const auto oss = scenarios::model_preset("gpt-oss-120b");
  REQUIRE(oss.sliding_layer_count() == 18);
  REQUIRE(oss.moe_layer_count() == 36);
}

TEST_CASE("MoE FLOPs per token are those of a dense model as wide as the active experts, plus the router", "[models][moe]") {
  // Mixtral 8x7B with top-2 of 8 experts does the matmuls of a dense model whose MLP is two
  // experts wide (gated: 3·h·2f weights), plus the router's h × 8 GEMM.
  auto moe = scenarios::model_preset("mixtral-8x7b");
  auto dense = moe;
  dense.moe = {};
  dense.ffn_hidden = 2 * moe.moe.expert_ffn_hidden;
  const auto t = training(4096);
  const double router = 6.0 * moe.layers * moe.hidden * moe.moe.experts;
  REQUIRE(models::flops_per_token(moe, t).model == Approx(models::flops_per_token(dense, t).model + router).epsilon(1e-12));
  REQUIRE(std::string(models::flops_per_token(moe, t).formula).find("active") != std::string::npos);
}

TEST_CASE("MLA attention FLOPs use the qk (nope + rope) and v head widths", "[models][moe]") {
  // Attention grows with s: 3 passes × 2·s·heads·(d_qk + d_v) per layer (main stack and MTP).
  const auto m = scenarios::model_preset("deepseek-v3");
  const double f1 = models::flops_per_token(m, training(4096)).model;
  const double f2 = models::flops_per_token(m, training(8192)).model;
  const double per_token_per_s = 3.0 * 2.0 * 128 * (128 + 64 + 128) * (61 + 1);
  REQUIRE(f2 - f1 == Approx(per_token_per_s * 4096).epsilon(1e-9));
}

TEST_CASE("sliding-window attention fraction matches a brute-force causal key count", "[models][moe]") {
  for (int s : {512, 4096}) {
    for (int w : {128, 1000, 4096}) {
      double window_keys = 0, causal_keys = 0;
      for (int i = 0; i < s; ++i) window_keys += std::min(i + 1, w), causal_keys += i + 1;
      INFO("s " << s << " w " << w);
      // The closed form drops the +1 of the discrete count: within 1/w of the brute force.
      REQUIRE(models::attention_keys_fraction(w, s) == Approx(window_keys / causal_keys).epsilon(2.0 / w));
    }
  }
  // gpt-oss-120b: the 18 windowed layers do a small fraction of the full-attention FLOPs.
  auto oss = scenarios::model_preset("gpt-oss-120b");
  auto full = oss;
  full.sliding_window = {};
  const auto t = training(8192);
  const double full_layer = 3.0 * 2.0 * 8192 * 64 * (64 + 64);
  const double saved = 18 * full_layer * (1 - models::attention_keys_fraction(128, 8192));
  REQUIRE(models::flops_per_token(full, t).model - models::flops_per_token(oss, t).model == Approx(saved).epsilon(1e-9));
}

}}  // namespace CLUSTERSIM_TEST_ID
