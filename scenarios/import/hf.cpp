// A Hugging Face config.json -> the model section of a scenario. Field names and defaults are those of
// the transformers configuration classes (LlamaConfig, Qwen2Config, Qwen3Config, Qwen3MoeConfig,
// MistralConfig, MixtralConfig, GemmaConfig, Gemma2Config, DeepseekV3Config, GptOssConfig, Llama4TextConfig).
// JSON is read with yaml-cpp (JSON is a subset of YAML 1.2).
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <set>

#include "scenarios/error.hpp"
#include "scenarios/import/importers.hpp"
#include "scenarios/import/moe_layer_pattern.hpp"

namespace clustersim::scenarios::importers {
namespace {

using fmt::format;

struct Config {
  YAML::Node n;
  const ImportOptions& opt;
  Imported& out;
  std::string type;

  bool has(const char* key) const { return n[key] && !n[key].IsNull(); }
  long long integer(const char* key) const {
    if (!has(key)) throw ScenarioError(format("{}: \"{}\" is missing (model_type {})", opt.source, key, type));
    try {
      return n[key].as<long long>();
    } catch (const YAML::Exception&) {
      throw ScenarioError(format("{}:{}: \"{}\": expected an integer", opt.source, n[key].Mark().line + 1, key));
    }
  }
  long long integer_or(const char* key, long long fallback) const { return has(key) ? integer(key) : fallback; }
  std::string text_or(const char* key, const std::string& fallback) const { return has(key) ? n[key].as<std::string>() : fallback; }
  bool flag_or(const char* key, bool fallback) const { return has(key) ? n[key].as<bool>() : fallback; }
  void set_int(const std::string& path, const char* key) const { out.set(path, format("{}", integer(key)), format("\"{}\"", key)); }
  // The stack's layers: "num_hidden_layers", or, where newer NemotronH configs (Nemotron 3 Ultra)
  // leave it null, the length of "layers_block_type".
  long long layers() const {
    if (!has("num_hidden_layers") && n["layers_block_type"] && n["layers_block_type"].IsSequence())
      return static_cast<long long>(n["layers_block_type"].size());
    return integer("num_hidden_layers");
  }
};

// Families whose MLP is gated (SwiGLU / GeGLU) and normalized with RMSNorm.
const std::set<std::string> kLlamaLike = {
    "llama",        "mistral",     "mixtral",    "qwen2",       "qwen2_moe",        "qwen3",
    "qwen3_moe",    "gemma",       "gemma2",     "gemma3_text", "deepseek_v2",      "deepseek_v3",
    "deepseek_v32", "deepseek_v4", "kimi_k2",    "gpt_oss",     "llama4_text",      "granite",
    "olmo2",        "phi3",        "qwen3_next", "kimi_linear", "granitemoehybrid", "jamba"};
// Families whose word embeddings are tied unless the config says otherwise (their config class default).
const std::set<std::string> kTiedByDefault = {"gemma", "gemma2", "gemma3_text", "gpt2"};

void import_core(const Config& c) {
  if (c.has("num_hidden_layers") || !c.has("layers_block_type")) c.set_int("model.layers", "num_hidden_layers");
  // (else import_hybrid sets it: Config::layers)
  c.set_int("model.hidden", "hidden_size");
  c.set_int("model.heads", "num_attention_heads");
  const long long heads = c.integer("num_attention_heads");
  const bool mla = c.has("kv_lora_rank");
  if (!mla) c.out.set("model.kv_heads", format("{}", c.integer_or("num_key_value_heads", heads)),
                      c.has("num_key_value_heads") ? "\"num_key_value_heads\"" : "no \"num_key_value_heads\": multi-head attention");
  if (c.has("head_dim") && c.integer("head_dim") * heads != c.integer("hidden_size")) c.set_int("model.head_dim", "head_dim");
  c.set_int("model.vocab", "vocab_size");
  const bool tied = c.flag_or("tie_word_embeddings", kTiedByDefault.count(c.type) > 0);
  c.out.set("model.tied_embeddings", tied ? "true" : "false",
            c.has("tie_word_embeddings") ? "\"tie_word_embeddings\"" : format("the {} config default", c.type));
  const bool gated = kLlamaLike.count(c.type) > 0;
  const std::string act = c.text_or("hidden_act", c.text_or("hidden_activation", "silu"));
  const bool gelu = act.rfind("gelu", 0) == 0;
  const char* activation = gated ? (gelu ? "geglu" : "swiglu") : act == "relu2" ? "relu2" : "gelu";
  c.out.set("model.activation", activation, format("\"hidden_act\": \"{}\"{}", act, gated ? ", gated MLP" : ""));
  c.out.set("model.norm", gated ? "rmsnorm" : "layernorm", gated ? format("{} uses RMSNorm", c.type) : format("{} uses LayerNorm", c.type));
  c.out.set("model.position", c.type == "gpt2" ? "learned" : "rope", c.type == "gpt2" ? "GPT-2 learned positions" : "rotary embeddings");
  const bool attn_bias = c.flag_or("attention_bias", c.type == "gpt_oss" || c.type == "gpt2");
  const bool qkv_bias = attn_bias || c.type == "qwen2" || c.type == "qwen2_moe";  // Qwen2 always biases q, k, v
  // GPT-OSS experts always carry biases (transformers GptOssExperts: gate_up_proj_bias, down_proj_bias).
  const bool mlp_bias = c.flag_or("mlp_bias", c.type == "gpt2" || c.type == "gpt_oss");
  c.out.set("model.bias", mlp_bias && attn_bias ? "true" : "false", "\"attention_bias\" and \"mlp_bias\"");
  if (qkv_bias && !(mlp_bias && attn_bias))
    c.out.set("model.qkv_bias", "true", c.type.rfind("qwen2", 0) == 0 ? "Qwen2 attention has q, k, v biases" : "\"attention_bias\"");
  const double dropout = c.has("attention_dropout") ? c.n["attention_dropout"].as<double>() : 0.0;
  c.out.set("model.dropout", yaml_number(dropout), c.has("attention_dropout") ? "\"attention_dropout\"" : "none in the config");
}

// Sliding-window layers from "layer_types" (GPT-OSS, Gemma 3, newer Qwen) or the family's rule.
void import_sliding_window(const Config& c) {
  if (!c.has("sliding_window") || c.type == "deepseek_v4") return;  // DeepSeek-V4: import_v4
  const long long window = c.integer("sliding_window");
  const long long layers = c.layers();
  long long sliding = 0;
  if (c.n["layer_types"] && c.n["layer_types"].IsSequence()) {
    for (const auto& t : c.n["layer_types"]) sliding += t.as<std::string>() == "sliding_attention" ? 1 : 0;
  } else if (c.type == "mistral" || c.type == "mixtral") {
    sliding = layers;
  } else if (c.type == "gemma2") {
    sliding = layers / 2;  // Gemma 2 alternates local and global attention layers
  } else if (c.flag_or("use_sliding_window", false)) {
    sliding = layers - c.integer_or("max_window_layers", 0);
  }
  if (sliding == 0) return;
  const long long every = std::max(1LL, (layers + sliding / 2) / sliding);
  if (layers / every != sliding)
    c.out.warn(format("{} of {} layers use the sliding window: approximated as every {}-th layer", sliding, layers, every));
  c.out.set("model.sliding_window.tokens", format("{}", window), "\"sliding_window\"");
  c.out.set("model.sliding_window.every", format("{}", every), c.n["layer_types"] ? "\"layer_types\"" : format("the {} layer pattern", c.type));
}

std::string first_of(const Config& c, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (c.has(k)) return k;
  return "";
}

// The routed-expert count's key in this family's config ("" for a dense model).
std::string routed_experts_key(const Config& c) {
  return first_of(c, {"n_routed_experts", "num_local_experts", "num_experts"});
}

void import_moe(const Config& c) {
  const std::string experts_key = routed_experts_key(c);
  if (experts_key.empty() || c.integer(experts_key.c_str()) <= 1) {
    c.set_int("model.ffn_hidden", c.has("intermediate_size_mlp") ? "intermediate_size_mlp" : "intermediate_size");
    return;
  }
  c.set_int("model.moe.experts", experts_key.c_str());
  c.set_int("model.moe.top_k", first_of(c, {"num_experts_per_tok", "experts_per_token", "num_experts_per_token"}).c_str());
  const std::string expert_ffn = first_of(c, {"moe_intermediate_size", "intermediate_size"});
  c.set_int("model.moe.expert_ffn_hidden", expert_ffn.c_str());
  const std::string dense_ffn = expert_ffn == "intermediate_size" ? first_of(c, {"intermediate_size_mlp", "intermediate_size"}) : "intermediate_size";
  if (c.has(dense_ffn.c_str())) c.set_int("model.ffn_hidden", dense_ffn.c_str());
  else
    c.out.set("model.ffn_hidden", format("{}", c.integer(expert_ffn.c_str())),
              format("no \"{}\": every layer is MoE (the expert width)", dense_ffn));
  if (c.has("n_shared_experts") && c.integer("n_shared_experts") > 0) c.set_int("model.moe.shared_experts", "n_shared_experts");
  if (c.has("num_shared_experts") && c.integer("num_shared_experts") > 0) c.set_int("model.moe.shared_experts", "num_shared_experts");
  if (c.type == "granitemoehybrid" && c.integer_or("shared_intermediate_size", 0) > 0)
    c.out.set("model.moe.shared_experts", format("{}", std::max(1LL, c.integer("shared_intermediate_size") / c.integer(expert_ffn.c_str()))),
              "\"shared_intermediate_size\" / expert width");
  if (c.has("shared_expert_intermediate_size") && c.integer("shared_expert_intermediate_size") > 0)
    c.out.set("model.moe.shared_experts", format("{}", std::max(1LL, c.integer("shared_expert_intermediate_size") / c.integer(expert_ffn.c_str()))),
              "\"shared_expert_intermediate_size\" / expert width");
  if (c.type == "llama4_text") c.out.set("model.moe.shared_experts", "1", "Llama 4 MoE layers have one shared expert");
  // Group-limited routing (DeepSeek-V2 device-limited, V3 node-limited): "n_group" / "topk_group".
  if (c.integer_or("n_group", 1) > 1 && c.has("topk_group")) {
    c.set_int("model.moe.router_groups", "n_group");
    c.set_int("model.moe.router_group_top_k", "topk_group");
  }
  const long long layers = c.layers();
  std::vector<bool> is_moe(static_cast<std::size_t>(layers), true);
  const long long first_dense = c.integer_or("first_k_dense_replace", 0);
  const long long step = c.integer_or("moe_layer_freq", c.integer_or("decoder_sparse_step", c.integer_or("interleave_moe_layer_step", 1)));
  for (long long i = 0; i < layers; ++i)
    is_moe[static_cast<std::size_t>(i)] = i >= first_dense && (step <= 1 || (i + 1) % step == 0);
  if (c.n["mlp_only_layers"] && c.n["mlp_only_layers"].IsSequence())
    for (const auto& l : c.n["mlp_only_layers"])
      if (l.as<long long>() >= 0 && l.as<long long>() < layers) is_moe[l.as<std::size_t>()] = false;
  const MoeLayerPattern p = moe_pattern_of(is_moe);
  if (p.dense_layers > 0) c.out.set("model.moe.dense_layers", format("{}", p.dense_layers), "\"first_k_dense_replace\" / \"mlp_only_layers\"");
  if (p.frequency != 1) c.out.set("model.moe.frequency", format("{}", p.frequency), "the MoE layer step");
  if (!p.note.empty()) c.out.warn(p.note);
}

void import_mla(const Config& c) {
  if (!c.has("kv_lora_rank")) return;
  c.out.set("model.mla.q_lora_rank", format("{}", c.integer_or("q_lora_rank", 0)), c.has("q_lora_rank") ? "\"q_lora_rank\"" : "\"q_lora_rank\": null (no query compression)");
  c.set_int("model.mla.kv_lora_rank", "kv_lora_rank");
  c.set_int("model.mla.qk_nope_head_dim", "qk_nope_head_dim");
  c.set_int("model.mla.qk_rope_head_dim", "qk_rope_head_dim");
  c.set_int("model.mla.v_head_dim", "v_head_dim");
  if (c.integer_or("num_nextn_predict_layers", 0) > 0) c.set_int("model.mtp_layers", "num_nextn_predict_layers");
  // DeepSeek-V3.2's DSA indexer (DeepseekV32 config: index_n_heads, index_head_dim, index_topk).
  if (!c.has("index_n_heads")) return;
  c.out.set("model.sparse_attention.kind", "dsa", "\"index_n_heads\" (DeepSeek Sparse Attention)");
  c.set_int("model.sparse_attention.index_heads", "index_n_heads");
  c.set_int("model.sparse_attention.index_head_dim", "index_head_dim");
  c.set_int("model.sparse_attention.top_k_tokens", "index_topk");
  if (c.has("index_topk_freq")) c.out.warn("\"index_topk_freq\": an indexer shared by several layers (GLM-5) is not modelled; every layer runs its own");
}

// Nemotron-H / Nemotron 3 (model_type nemotron_h, transformers NemotronHConfig): the layer
// pattern ("hybrid_override_pattern", or "layers_block_type" as names), the Mamba-2 widths, the
// squared-ReLU MLPs ("mlp_hidden_act"), RMSNorm, the latent MoE width and the MTP modules.
void import_hybrid(const Config& c) {
  if (!c.has("hybrid_override_pattern") && !c.has("layers_block_type")) return;
  std::string pattern;
  if (c.has("hybrid_override_pattern")) {
    pattern = c.n["hybrid_override_pattern"].as<std::string>();
  } else {
    for (const auto& b : c.n["layers_block_type"]) {
      const std::string t = b.as<std::string>();
      const char ch = t == "mamba" ? 'M' : t == "attention" ? '*' : t == "moe" ? 'E' : t == "mlp" ? '-' : '?';
      if (ch == '?') throw ScenarioError(format("{}: \"layers_block_type\": \"{}\" is not mamba, attention, mlp or moe", c.opt.source, t));
      pattern += ch;
    }
    c.out.set("model.layers", format("{}", pattern.size()), "the length of \"layers_block_type\"");
  }
  c.out.set("model.layer_pattern", format("\"{}\"", pattern), c.has("hybrid_override_pattern") ? "\"hybrid_override_pattern\"" : "\"layers_block_type\"");
  if (pattern.find('M') != std::string::npos) {
    c.set_int("model.mamba.state_dim", "ssm_state_size");
    c.set_int("model.mamba.heads", "mamba_num_heads");
    c.out.set("model.mamba.head_dim", format("{}", c.integer_or("mamba_head_dim", 64)), c.has("mamba_head_dim") ? "\"mamba_head_dim\"" : "the NemotronHConfig default");
    c.out.set("model.mamba.groups", format("{}", c.integer_or("n_groups", 8)), c.has("n_groups") ? "\"n_groups\"" : "the NemotronHConfig default");
    c.out.set("model.mamba.conv_kernel", format("{}", c.integer_or("conv_kernel", 4)), c.has("conv_kernel") ? "\"conv_kernel\"" : "the NemotronHConfig default");
    c.out.set("model.mamba.chunk", format("{}", c.integer_or("chunk_size", 128)), c.has("chunk_size") ? "\"chunk_size\"" : "the NemotronHConfig default");
  }
  const std::string act = c.text_or("mlp_hidden_act", "relu2");
  c.out.set("model.activation", act == "relu2" ? "relu2" : "gelu", format("\"mlp_hidden_act\": \"{}\" (non-gated)", act));
  c.out.set("model.norm", "rmsnorm", "Nemotron-H uses RMSNorm");
  if (c.has("moe_shared_expert_intermediate_size") && c.has("moe_intermediate_size") && c.integer_or("n_shared_experts", 1) > 0)
    c.out.set("model.moe.shared_experts",
              format("{}", std::max(1LL, c.integer("moe_shared_expert_intermediate_size") / c.integer("moe_intermediate_size"))),
              "\"moe_shared_expert_intermediate_size\" / expert width");
  if (c.has("moe_latent_size")) c.set_int("model.moe.latent_dim", "moe_latent_size");
  if (c.integer_or("num_nextn_predict_layers", 0) > 0) c.set_int("model.mtp_layers", "num_nextn_predict_layers");
  c.out.warn("Nemotron-H trains without position embeddings; imported as rope (one rotary kernel per attention layer, no parameters)");
}

// Each layer's sequence mixer from the forms hybrid configs use: Kimi Linear's
// "linear_attn_config".full_attn_layers (1-based; the rest KDA), "layer_types" (Qwen3-Next
// linear_attention / full_attention, Granite 4.0-H mamba / attention), Qwen3-Next's
// "full_attention_interval". Empty when the config has none of them.
std::string mixers_of(const Config& c, long long layers, std::string* origin) {
  std::string mixer;
  if (c.n["linear_attn_config"] && c.n["linear_attn_config"]["full_attn_layers"]) {
    mixer.assign(static_cast<std::size_t>(layers), 'l');
    for (const auto& l : c.n["linear_attn_config"]["full_attn_layers"]) {
      const long long i = l.as<long long>() - 1;
      if (i < 0 || i >= layers) throw ScenarioError(format("{}: \"full_attn_layers\" entry {} is outside 1..{}", c.opt.source, i + 1, layers));
      mixer[static_cast<std::size_t>(i)] = 'a';
    }
    *origin = "\"linear_attn_config\".full_attn_layers (1-based), the rest KDA";
  } else if (c.n["layer_types"] && c.n["layer_types"].IsSequence() && c.type != "gemma2" && c.type != "gemma3_text") {
    for (const auto& t : c.n["layer_types"]) {
      const std::string s = t.as<std::string>();
      const char ch = s == "linear_attention" ? 'l' : s == "mamba" ? 'm' : s == "full_attention" || s == "attention" ? 'a' : '?';
      if (ch == '?') return "";  // sliding / full attention lists are read by import_sliding_window
      mixer += ch;
    }
    *origin = "\"layer_types\"";
  } else if (c.type == "jamba") {  // JambaConfig: attention where (i − offset) % period == 0, Mamba-1 elsewhere
    const long long every = c.integer_or("attn_layer_period", 8), offset = c.integer_or("attn_layer_offset", 4);
    for (long long i = 0; i < layers; ++i) mixer += (i - offset) % every == 0 ? 'a' : 'm';
    *origin = "\"attn_layer_period\" and \"attn_layer_offset\"";
  } else if (c.type == "qwen3_next" && c.has("full_attention_interval")) {
    const long long every = c.integer("full_attention_interval");
    for (long long i = 0; i < layers; ++i) mixer += (i + 1) % every == 0 ? 'a' : 'l';
    *origin = "\"full_attention_interval\"";
  }
  if (mixer.find_first_not_of('a') == std::string::npos) return "";
  if (static_cast<long long>(mixer.size()) != layers)
    throw ScenarioError(format("{}: {} lists {} layers but \"num_hidden_layers\" is {}", c.opt.source, *origin, mixer.size(), layers));
  return mixer;
}

// Jamba's Mamba-1 mixer (JambaConfig mamba_* keys; mamba_dt_rank "auto" is ceil(hidden / 16), as
// the loader's default), and its missing position embedding.
void import_mamba1(const Config& c) {
  c.out.set("model.mamba.kind", "mamba1", format("model_type {} (Mamba-1 layers)", c.type));
  c.out.set("model.mamba.state_dim", format("{}", c.integer_or("mamba_d_state", 16)), c.has("mamba_d_state") ? "\"mamba_d_state\"" : "the JambaConfig default");
  c.out.set("model.mamba.expand", format("{}", c.integer_or("mamba_expand", 2)), c.has("mamba_expand") ? "\"mamba_expand\"" : "the JambaConfig default");
  if (c.has("mamba_dt_rank") && c.n["mamba_dt_rank"].as<std::string>() != "auto") c.set_int("model.mamba.dt_rank", "mamba_dt_rank");
  c.out.set("model.mamba.conv_kernel", format("{}", c.integer_or("mamba_d_conv", 4)), c.has("mamba_d_conv") ? "\"mamba_d_conv\"" : "the JambaConfig default");
  c.out.warn("Jamba trains without position embeddings; imported as rope (one rotary kernel per attention layer, no parameters)");
}

// Linear-attention and Granite-style Mamba hybrids: model.layer_pattern as a list (each layer's
// mixer and its MLP, MoE by import_moe's rule, which it replaces), model.linear_attention
// (Qwen3-Next linear_* keys, Kimi linear_attn_config) or model.mamba (Granite mamba_* keys).
void import_layer_types(const Config& c) {
  const long long layers = c.layers();
  std::string origin;
  const std::string mixer = mixers_of(c, layers, &origin);
  if (mixer.empty()) return;
  const bool moe = c.out.find("model.moe.experts") != nullptr;
  const ImportedKey* dense = c.out.find("model.moe.dense_layers");
  const ImportedKey* freq = c.out.find("model.moe.frequency");
  const long long first = dense ? std::stoll(dense->value) : 0, every = freq ? std::stoll(freq->value) : 1;
  // JambaConfig: MoE where (i − expert_layer_offset) % expert_layer_period == 0.
  const bool jamba = c.type == "jamba";
  const long long expert_every = c.integer_or("expert_layer_period", 2), expert_offset = c.integer_or("expert_layer_offset", 1);
  std::string list;
  for (long long i = 0; i < layers; ++i) {
    const char m = mixer[static_cast<std::size_t>(i)];
    const bool is_moe = moe && (jamba ? (i - expert_offset) % expert_every == 0 : i >= first && (i - first) % every == every - 1);
    list += format("{}{}+{}", i ? ", " : "[", m == 'l' ? "linear" : m == 'm' ? "mamba" : "attention", is_moe ? "moe" : "mlp");
  }
  c.out.set("model.layer_pattern", list + "]",
            origin + (jamba ? " with \"expert_layer_period\" and \"expert_layer_offset\"" : " with the MoE layer rule"));
  c.out.erase("model.moe.dense_layers");
  c.out.erase("model.moe.frequency");
  if (jamba) {
    import_mamba1(c);
    return;
  }
  if (mixer.find('m') != std::string::npos) {
    c.set_int("model.mamba.state_dim", "mamba_d_state");
    c.set_int("model.mamba.heads", "mamba_n_heads");
    c.out.set("model.mamba.head_dim", format("{}", c.integer_or("mamba_d_head", 64)), c.has("mamba_d_head") ? "\"mamba_d_head\"" : "the GraniteMoeHybridConfig default");
    c.out.set("model.mamba.groups", format("{}", c.integer_or("mamba_n_groups", 1)), c.has("mamba_n_groups") ? "\"mamba_n_groups\"" : "the GraniteMoeHybridConfig default");
    c.out.set("model.mamba.conv_kernel", format("{}", c.integer_or("mamba_d_conv", 4)), c.has("mamba_d_conv") ? "\"mamba_d_conv\"" : "the GraniteMoeHybridConfig default");
    c.out.set("model.mamba.chunk", format("{}", c.integer_or("mamba_chunk_size", 256)), c.has("mamba_chunk_size") ? "\"mamba_chunk_size\"" : "the GraniteMoeHybridConfig default");
  }
  if (mixer.find('l') == std::string::npos) return;
  if (c.n["linear_attn_config"]) {
    const Config k{c.n["linear_attn_config"], c.opt, c.out, c.type};
    c.out.set("model.linear_attention.kind", "kda", "\"linear_attn_config\" (Kimi Delta Attention)");
    k.set_int("model.linear_attention.heads", "num_heads");
    k.set_int("model.linear_attention.head_dim", "head_dim");
    c.out.set("model.linear_attention.conv_kernel", format("{}", k.integer_or("short_conv_kernel_size", 4)), "\"short_conv_kernel_size\"");
    return;
  }
  c.out.set("model.linear_attention.kind", "gated_deltanet", format("model_type {} (gated DeltaNet)", c.type));
  c.set_int("model.linear_attention.heads", "linear_num_value_heads");
  c.set_int("model.linear_attention.key_heads", "linear_num_key_heads");
  c.set_int("model.linear_attention.head_dim", "linear_key_head_dim");
  c.set_int("model.linear_attention.value_head_dim", "linear_value_head_dim");
  c.out.set("model.linear_attention.conv_kernel", format("{}", c.integer_or("linear_conv_kernel_dim", 4)), "\"linear_conv_kernel_dim\"");
}

// DeepSeek-V4 (model_type deepseek_v4): its hybrid attention (compress_ratios, sliding_window,
// q_lora_rank, o_groups, o_lora_rank, qk_rope_head_dim, index_*), hyper-connections (hc_mult,
// hc_sinkhorn_iters) and MTP module. "num_hash_layers" needs nothing: those layers pick experts
// from a token-id table but still run the gate GEMM for the weights, so they cost as the others.
void import_v4(const Config& c) {
  if (c.type != "deepseek_v4") return;
  const std::string a = "model.compressed_attention.";
  c.out.set(a + "kind", "deepseek_v4", "model_type deepseek_v4 (CSA/HCA hybrid attention)");
  c.set_int(a + "window", "sliding_window");
  c.set_int(a + "q_lora_rank", "q_lora_rank");
  c.set_int(a + "o_groups", "o_groups");
  c.set_int(a + "o_lora_rank", "o_lora_rank");
  c.set_int(a + "rope_dim", "qk_rope_head_dim");
  c.set_int(a + "index_heads", "index_n_heads");
  c.set_int(a + "index_head_dim", "index_head_dim");
  c.set_int(a + "top_k", "index_topk");
  if (!c.n["compress_ratios"] || !c.n["compress_ratios"].IsSequence())
    throw ScenarioError(
        format("{}: \"compress_ratios\" is missing or not a list (model_type deepseek_v4)", c.opt.source));
  std::string ratios;
  for (const auto& r : c.n["compress_ratios"]) ratios += (ratios.empty() ? "" : ", ") + r.as<std::string>();
  c.out.set(a + "ratios", "[" + ratios + "]",
            "\"compress_ratios\" (4: CSA with the indexer, others: HCA, 0: window only)");
  if (c.integer_or("hc_mult", 1) > 1) {
    c.set_int("model.hyper_connections.streams", "hc_mult");
    c.out.set("model.hyper_connections.sinkhorn_iters", format("{}", c.integer_or("hc_sinkhorn_iters", 20)),
              "\"hc_sinkhorn_iters\"");
  }
  if (c.integer_or("num_nextn_predict_layers", 0) > 0) c.set_int("model.mtp_layers", "num_nextn_predict_layers");
}

// Attention without rotary embeddings, which the scenario cannot say (its positions are learned,
// rope or yarn): Kimi Linear's "mla_use_nope" (the MLA layers skip the rotation of their
// qk_rope_head_dim part) and GraniteMoeHybrid's "position_embedding_type": "nope". Imported as
// rope, as the presets write them; Jamba and Nemotron-H warn the same in their own readers.
void import_nope(const Config& c) {
  if (c.flag_or("mla_use_nope", false))
    c.out.warn(
        "\"mla_use_nope\": true: the MLA layers apply no rotary embedding; imported as rope (one rotary "
        "kernel per attention layer, no parameters)");
  if (c.text_or("position_embedding_type", "") == "nope")
    c.out.warn(
        "\"position_embedding_type\": \"nope\": attention without position embeddings; imported as rope (one "
        "rotary kernel per attention layer, no parameters)");
}

// YaRN on ordinary attention (GPT-OSS) is "yarn": Megatron-Core applies it unfused. MLA and
// compressed attention keep "rope" (their own fused kernels take YaRN's scale). swiglu_limit
// (GPT-OSS) clamps the experts' GLU inputs.
void import_yarn_and_clamp(const Config& c) {
  const YAML::Node rs = c.n["rope_scaling"];
  if (rs && rs.IsMap() && !c.has("kv_lora_rank") && c.type != "deepseek_v4") {
    const std::string kind = rs["rope_type"] ? rs["rope_type"].as<std::string>()
                             : rs["type"]    ? rs["type"].as<std::string>()
                                             : "";
    if (kind == "yarn") c.out.set("model.position", "yarn", "\"rope_scaling\": YaRN");
  }
  if (!c.has("swiglu_limit")) return;
  if (routed_experts_key(c).empty())
    c.out.warn("\"swiglu_limit\": a clamped GLU in a dense MLP is not modelled (costed for MoE experts only)");
  else c.out.set("model.activation_clamp", yaml_number(c.n["swiglu_limit"].as<double>()), "\"swiglu_limit\"");
}

}  // namespace

Imported import_hf(const std::string& text, const ImportOptions& opt) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ScenarioError(format("{}:{}:{}: not valid JSON: {}", opt.source, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  if (!root.IsMap()) throw ScenarioError(format("{}: expected a JSON object (a Hugging Face config.json)", opt.source));
  YAML::Node n = root["text_config"] && root["text_config"].IsMap() ? root["text_config"] : root;  // Llama 4, Gemma 3
  Imported out;
  const std::string type = n["model_type"] ? n["model_type"].as<std::string>() : root["model_type"] ? root["model_type"].as<std::string>() : "";
  if (type.empty()) throw ScenarioError(format("{}: \"model_type\" is missing: is this a Hugging Face config.json?", opt.source));
  out.name = root["_name_or_path"] ? root["_name_or_path"].as<std::string>() : format("{} (imported from {})", type, opt.source);
  const Config c{n, opt, out, type};
  if (!kLlamaLike.count(type) && type != "gpt2" && type != "nemotron_h")
    out.warn(format("model_type \"{}\" is not one of the families the importer knows; read as a Llama-style decoder", type));
  import_core(c);
  import_moe(c);
  import_mla(c);
  import_sliding_window(c);
  import_hybrid(c);
  import_layer_types(c);
  import_v4(c);
  import_nope(c);
  import_yarn_and_clamp(c);
  return out;
}

}  // namespace clustersim::scenarios::importers
