// The Hugging Face half of the importer corpus: every model preset's config.json as its owner
// publishes it (tests/data/configs/hf/, each with the repository and commit it was copied from in
// tests/data/configs/SOURCES), imported as `clustersim import hf` does and compared with the preset
// of the same name. A preset that drifts from the published architecture, or an importer that
// misreads a published field, fails here by name.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "models/model_spec.hpp"
#include "scenarios/import/importers.hpp"
#include "scenarios/load.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

const std::string kHf = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/data/configs/hf/";

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The same job around a model section: only the model differs between the two scenarios.
constexpr const char* kJob = "hardware: h100-sxm\ncluster: {gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n";

models::ModelSpec imported_model(const std::string& preset) {
  scenarios::importers::ImportOptions o;
  o.source = "hf/" + preset + ".json";
  const auto im = scenarios::importers::import_hf(slurp(kHf + preset + ".json"), o);
  return scenarios::load_scenario_string(scenarios::importers::to_yaml(im, {}) + kJob, o.source).model;
}

models::ModelSpec preset_model(const std::string& preset) {
  return scenarios::load_scenario_string("model: " + preset + "\n" + kJob, preset).model;
}

void check_same(const models::ModelSpec& a, const models::ModelSpec& p) {
  CHECK(a.layers == p.layers);
  CHECK(a.hidden == p.hidden);
  CHECK(a.heads == p.heads);
  CHECK(a.kv_heads == p.kv_heads);
  CHECK(a.head_dim() == p.head_dim());
  CHECK(a.vocab == p.vocab);
  CHECK(a.activation == p.activation);
  CHECK(a.norm == p.norm);
  CHECK(a.tied_embeddings == p.tied_embeddings);
  CHECK(a.has_qkv_bias() == p.has_qkv_bias());
  CHECK(a.moe.experts == p.moe.experts);
  CHECK(a.moe.top_k == p.moe.top_k);
  CHECK(a.moe.shared_experts == p.moe.shared_experts);
  CHECK(a.moe.latent_dim == p.moe.latent_dim);
  CHECK(a.moe.router_groups == p.moe.router_groups);
  CHECK(a.moe.router_group_top_k == p.moe.router_group_top_k);
  CHECK(a.moe_layer_count() == p.moe_layer_count());
  CHECK(a.mla.kv_lora_rank == p.mla.kv_lora_rank);
  CHECK(a.mla.q_lora_rank == p.mla.q_lora_rank);
  CHECK(a.qk_head_dim() == p.qk_head_dim());
  CHECK(a.v_head_dim() == p.v_head_dim());
  CHECK(a.mtp_layers == p.mtp_layers);
  CHECK(a.sliding_layer_count() == p.sliding_layer_count());
  CHECK(a.sliding_window.tokens == p.sliding_window.tokens);
  CHECK(a.mamba.heads == p.mamba.heads);
  CHECK(a.mamba.state_dim == p.mamba.state_dim);
  CHECK(a.linear_attention.heads == p.linear_attention.heads);
  CHECK(a.sparse_attention.index_heads == p.sparse_attention.index_heads);
  CHECK(a.layer_pattern == p.layer_pattern);
  CHECK(a.compressed_attention.ratios == p.compressed_attention.ratios);
  CHECK(a.compressed_attention.top_k == p.compressed_attention.top_k);
  CHECK(a.hyper_connections.streams == p.hyper_connections.streams);
  // Every weight the two count: a width the fields above miss (an expert's or the dense MLP's)
  // shows here.
  const auto ca = models::count_params(a, 4096), cp = models::count_params(p, 4096);
  CHECK(ca.total == Approx(cp.total).epsilon(1e-9));
  CHECK(ca.active == Approx(cp.active).epsilon(1e-9));
}

}  // namespace

TEST_CASE("corpus: every model preset with a published HF config.json is that config", "[import][corpus][hf]") {
  for (const char* preset : {"llama2-7b",
                             "llama2-13b",
                             "llama2-70b",
                             "llama3-8b",
                             "llama3-70b",
                             "llama3-405b",
                             "mixtral-8x7b",
                             "deepseek-v3",
                             "deepseek-v3.2",
                             "deepseek-v4-flash",
                             "deepseek-v4-pro",
                             "qwen3-30b-a3b",
                             "qwen3-235b-a22b",
                             "qwen3-next-80b-a3b",
                             "gpt-oss-20b",
                             "gpt-oss-120b",
                             "kimi-k2",
                             "llama4-scout",
                             "llama4-maverick",
                             "nemotron-h-56b",
                             "nemotron3-nano-30b-a3b",
                             "nemotron3-super-120b-a12b",
                             "nemotron3-ultra-550b-a55b",
                             "nemotron3.5-lightning-30b-a3b"}) {
    INFO("preset " << preset << " against tests/data/configs/hf/" << preset << ".json");
    check_same(imported_model(preset), preset_model(preset));
  }
}

TEST_CASE("corpus: Grok-1's HF port (custom code, no model_type) is refused by name, not guessed", "[import][corpus][hf]") {
  // xAI publishes no config.json; HPC-AI Tech's port loads through auto_map custom code and names
  // neither model_type nor hidden_act (Grok-1's GeGLU), so the importer cannot tell what it is.
  scenarios::importers::ImportOptions o;
  o.source = "hf/grok-1.json";
  CHECK_THROWS_WITH(scenarios::importers::import_hf(slurp(kHf + "grok-1.json"), o),
                    Catch::Contains("hf/grok-1.json") && Catch::Contains("model_type"));
}

}}  // namespace CLUSTERSIM_TEST_ID
