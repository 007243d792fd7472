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
using scenarios::importers::Imported;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The same job around a model section: only the model differs between the two scenarios.
constexpr const char* kJob = "hardware: h100-sxm\ncluster: {gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n";

Imported imported(const std::string& preset) {
  scenarios::importers::ImportOptions o;
  o.source = "hf/" + preset + ".json";
  return scenarios::importers::import_hf(slurp(kHf + preset + ".json"), o);
}

models::ModelSpec imported_model(const std::string& preset) {
  return scenarios::load_scenario_string(scenarios::importers::to_yaml(imported(preset), {}) + kJob,
                                         "hf/" + preset + ".json")
      .model;
}

std::string value(const Imported& i, const std::string& path) {
  const auto* k = i.find(path);
  return k ? k->value : "(unset)";
}

bool warned(const Imported& i, const std::string& part) {
  for (const auto& w : i.warnings)
    if (w.find(part) != std::string::npos) return true;
  return false;
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
                             "kimi-linear-48b-a3b",
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

TEST_CASE("corpus: Kimi Linear's published config.json imports its KDA/MLA hybrid, MoE and NoPE",
          "[import][corpus][hf]") {
  // moonshotai/Kimi-Linear-48B-A3B-Instruct, read by hand from the file: 27 layers, hidden 2304,
  // 32 heads (MLA: kv_lora_rank 512, q_lora_rank null, qk 128 + 64, v 128; num_key_value_heads 32
  // and head_dim 72 = 2304 / 32 are not read for MLA), "linear_attn_config".full_attn_layers
  // [4, 8, 12, 16, 20, 24, 27] (1-based) with KDA in the other 20 (32 heads of 128, conv 4),
  // 256 experts of 1024, 8 per token ("num_experts_per_token"), 1 shared, first_k_dense_replace 1
  // (layer 0's MLP is dense, 9216 wide), vocab 163840, untied, "mla_use_nope": true.
  const Imported k = imported("kimi-linear-48b-a3b");
  CHECK(value(k, "model.layers") == "27");
  CHECK(value(k, "model.hidden") == "2304");
  CHECK(value(k, "model.heads") == "32");
  CHECK(k.find("model.kv_heads") == nullptr);  // MLA
  CHECK(k.find("model.head_dim") == nullptr);  // 72 · 32 = 2304
  CHECK(value(k, "model.vocab") == "163840");
  CHECK(value(k, "model.tied_embeddings") == "false");
  CHECK(value(k, "model.ffn_hidden") == "9216");
  CHECK(value(k, "model.moe.experts") == "256");
  CHECK(value(k, "model.moe.top_k") == "8");
  CHECK(value(k, "model.moe.shared_experts") == "1");
  CHECK(value(k, "model.moe.expert_ffn_hidden") == "1024");
  CHECK(value(k, "model.mla.q_lora_rank") == "0");
  CHECK(value(k, "model.mla.kv_lora_rank") == "512");
  CHECK(value(k, "model.mla.qk_nope_head_dim") == "128");
  CHECK(value(k, "model.mla.qk_rope_head_dim") == "64");
  CHECK(value(k, "model.mla.v_head_dim") == "128");
  CHECK(k.find("model.mtp_layers") == nullptr);  // num_nextn_predict_layers 0
  CHECK(value(k, "model.linear_attention.kind") == "kda");
  CHECK(value(k, "model.linear_attention.heads") == "32");
  CHECK(value(k, "model.linear_attention.head_dim") == "128");
  CHECK(value(k, "model.linear_attention.conv_kernel") == "4");
  std::string pattern = "[";
  for (int layer = 1; layer <= 27; ++layer)
    pattern += std::string(layer > 1 ? ", " : "") + (layer % 4 == 0 || layer == 27 ? "attention" : "linear") +
               (layer == 1 ? "+mlp" : "+moe");
  CHECK(value(k, "model.layer_pattern") == pattern + "]");
  // The MLA layers rotate nothing: the scenario has no such position, so it is said, not dropped.
  CHECK(warned(k, "\"mla_use_nope\": true"));
  const models::ModelSpec m = imported_model("kimi-linear-48b-a3b");
  CHECK(m.mixer_count(models::Mixer::linear) == 20);
  CHECK(m.mixer_count(models::Mixer::attention) == 7);
  CHECK(m.moe_layer_count() == 26);
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
