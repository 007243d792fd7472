#include "scenarios/load_model.hpp"

#include <fmt/format.h>

#include "scenarios/error.hpp"
#include "scenarios/load_hybrid.hpp"
#include "scenarios/plan_rules.hpp"
#include "scenarios/presets.hpp"

namespace clustersim::scenarios {

namespace {

// model.moe: routed experts per token, widths and which layers are MoE.
models::MoeSpec read_moe(const YamlReader& r, int layers) {
  r.allow_only({"experts", "top_k", "shared_experts", "expert_ffn_hidden", "dense_layers", "frequency",
                "capacity_factor", "latent_dim", "router_groups", "router_group_top_k"});
  for (const char* k : {"experts", "top_k", "expert_ffn_hidden"})
    if (!r.has(k)) r.fail(k, "is required in model.moe");
  models::MoeSpec e;
  e.experts = r.integer("experts", 0, 1, 65536);
  e.top_k = r.integer("top_k", 0, 1, 65536);
  if (e.top_k > e.experts) r.fail("top_k", fmt::format("{} is more than the {} routed experts", e.top_k, e.experts));
  e.shared_experts = r.integer("shared_experts", 0, 0, 64);
  e.expert_ffn_hidden = r.integer("expert_ffn_hidden", 0, 1, 1048576);
  e.dense_layers = r.integer("dense_layers", 0, 0, layers - 1);
  e.frequency = r.integer("frequency", 1, 1, layers);
  e.capacity_factor = r.number("capacity_factor", 0, 0, 1000);
  e.latent_dim = r.integer("latent_dim", 0, 1, 1048576);
  e.router_groups = r.integer("router_groups", 1, 1, e.experts);
  if (const std::string why = router_groups_refusal(e.router_groups, e.experts); !why.empty())
    r.fail("router_groups", why);
  if (r.has("router_group_top_k") && !r.has("router_groups"))
    r.fail("router_group_top_k", "needs model.moe.router_groups (the groups it chooses among)");
  e.router_group_top_k = r.integer("router_group_top_k", 0, 1, e.router_groups);
  if (e.router_group_top_k > 0)
    if (const std::string why = router_group_top_k_refusal(e.router_group_top_k, e.router_groups, e.top_k);
        !why.empty())
      r.fail("router_group_top_k", why);
  if (e.capacity_factor > 0 && e.capacity_factor < 1)
    r.fail("capacity_factor", "must be 0 (dropless) or at least 1 (capacity = factor × tokens·top_k / experts)");
  if (layers - e.dense_layers < e.frequency)
    r.fail("frequency", fmt::format("no layer is MoE: {} layers after the {} dense ones, every {}-th is MoE",
                                    layers - e.dense_layers, e.dense_layers, e.frequency));
  return e;
}

models::MlaSpec read_mla(const YamlReader& r) {
  r.allow_only({"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
  for (const char* k : {"kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
    if (!r.has(k)) r.fail(k, "is required in model.mla");
  models::MlaSpec a;
  a.q_lora_rank = r.integer("q_lora_rank", 0, 0, 65536);
  a.kv_lora_rank = r.integer("kv_lora_rank", 0, 1, 65536);
  a.qk_nope_head_dim = r.integer("qk_nope_head_dim", 0, 0, 4096);
  a.qk_rope_head_dim = r.integer("qk_rope_head_dim", 0, 1, 4096);
  a.v_head_dim = r.integer("v_head_dim", 0, 1, 4096);
  return a;
}

// Norm, biases and dropout when the model does not say: the convention of the family that
// introduced the activation (GPT-2/3 for gelu: LayerNorm, biases, dropout 0.1 as Megatron's
// defaults; Llama for the others: RMSNorm, no biases, no dropout). Presets state them.
void read_fidelity(const YamlReader& r, models::ModelSpec* m) {
  const bool gpt = m->activation == models::Activation::gelu;
  m->norm = r.enum_choice("norm", models::kNormNames, gpt ? models::Norm::layernorm : models::Norm::rmsnorm);
  m->bias = r.boolean("bias", gpt);
  m->qkv_bias = r.boolean("qkv_bias", m->bias);
  if (m->bias && !m->qkv_bias)
    r.fail("qkv_bias", "is false but bias: true puts a bias on every linear layer, QKV included");
  m->dropout = r.number("dropout", gpt ? 0.1 : 0.0, 0, 0.99);
}

}  // namespace

models::ModelSpec read_model(const YamlReader& r, const std::string& name) {
  r.allow_only({"name",
                "layers",
                "hidden",
                "heads",
                "kv_heads",
                "ffn_hidden",
                "vocab",
                "activation",
                "tied_embeddings",
                "position",
                "head_dim",
                "norm",
                "bias",
                "qkv_bias",
                "dropout",
                "activation_clamp",
                "moe",
                "mla",
                "sliding_window",
                "mtp_layers",
                "layer_pattern",
                "mamba",
                "linear_attention",
                "sparse_attention",
                "compressed_attention",
                "hyper_connections"});
  for (const char* k : {"layers", "hidden", "heads", "ffn_hidden", "vocab"})
    if (!r.has(k)) r.fail(k, "is required in a model definition");
  models::ModelSpec m;
  m.name = r.text("name", name);
  m.layers = r.integer("layers", 0, 1, 2000);
  m.hidden = r.integer("hidden", 0, 1, 262144);
  m.heads = r.integer("heads", 0, 1, 4096);
  if (r.has("mla") && r.has("kv_heads"))
    r.fail("kv_heads", "cannot be given together with model.mla (latent attention has one latent K/V; every head "
                       "gets its own key and value from it)");
  m.kv_heads = r.integer("kv_heads", m.heads, 1, 4096);
  m.ffn_hidden = r.integer("ffn_hidden", 0, 1, 1048576);
  m.vocab = r.integer("vocab", 0, 1, 10000000);
  m.activation = r.enum_choice("activation", models::kActivationNames, models::Activation::gelu);
  m.tied_embeddings = r.boolean("tied_embeddings", false);
  m.position = r.enum_choice("position", models::kPositionNames, models::Position::learned);
  if (r.has("mla") && r.has("head_dim"))
    r.fail("head_dim", "cannot be given together with model.mla; set mla.qk_nope_head_dim, qk_rope_head_dim and v_head_dim");
  m.head_size = r.integer("head_dim", 0, 1, 65536);
  // Blame the value the user changed (--set/--vary model.hidden), not the preset's line.
  if (m.head_size == 0 && m.hidden % m.heads != 0)
    r.fail(r.patched("hidden") ? "hidden" : "heads", fmt::format("hidden ({}) must be divisible by heads ({}), or give model.head_dim", m.hidden, m.heads));
  if (m.heads % m.kv_heads != 0)
    r.fail("kv_heads", fmt::format("heads ({}) must be a multiple of kv_heads ({})", m.heads, m.kv_heads));
  read_fidelity(r, &m);
  if (r.has("moe")) m.moe = read_moe(r.child("moe"), m.layers);
  if (r.has("mla")) m.mla = read_mla(r.child("mla"));
  if (r.has("sliding_window")) {
    const YamlReader w = r.child("sliding_window");
    w.allow_only({"tokens", "every"});
    if (!w.has("tokens")) w.fail("tokens", "is required (the window in tokens)");
    m.sliding_window.tokens = w.integer("tokens", 0, 1, 100000000);
    m.sliding_window.every = w.integer("every", 1, 1, m.layers);
  }
  m.mtp_layers = r.integer("mtp_layers", 0, 0, 64);
  read_hybrid(r, &m);
  m.activation_clamp = r.number("activation_clamp", 0, 0, 1e6);
  if (m.activation_clamp > 0 && !models::gated(m.activation))
    r.fail("activation_clamp", "clamps a gated MLP's inputs; activation must be swiglu or geglu");
  if (m.activation_clamp > 0 && !m.moe.enabled())
    r.fail("activation_clamp",
           "is costed on MoE experts only (Megatron-Core's grouped MLP); give model.moe or drop it");
  return m;
}

models::ModelSpec model_preset(const std::string& name) {
  const auto& texts = model_preset_texts();
  auto it = texts.find(name);
  if (it == texts.end()) throw ScenarioError(fmt::format("unknown model preset '{}'", name));
  const std::string file = "models/presets/" + name + ".yaml";
  YAML::Node node;
  try {
    node = YAML::Load(it->second);
  } catch (const YAML::Exception& e) {
    throw ScenarioError(fmt::format("{}:{}: YAML syntax error: {}", file, e.mark.line + 1, e.msg));
  }
  return read_model(YamlReader(node, "model", [file](const std::string&) { return file; }, nullptr), name);
}

}  // namespace clustersim::scenarios
