#include "scenarios/load_hybrid.hpp"

#include <fmt/format.h>

#include <charconv>

namespace clustersim::scenarios {

using models::LayerKind;
using models::MlpKind;
using models::Mixer;

std::vector<LayerKind> parse_layer_pattern(const std::string& text, std::string* error) {
  std::vector<LayerKind> out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    LayerKind k;
    if (!parse_layer_name(std::string(1, text[i]), &k)) {
      *error = fmt::format("character {} ('{}') is not a layer: M (Mamba-2), * (attention), - (dense MLP) or E (MoE)",
                           i + 1, text[i]);
      return {};
    }
    out.push_back(k);
  }
  return out;
}

bool parse_layer_name(const std::string& name, LayerKind* out) {
  struct Named {
    const char* name;
    LayerKind kind;
  };
  static const Named kNames[] = {
      {"M", {Mixer::mamba, MlpKind::none}},          {"*", {Mixer::attention, MlpKind::none}},
      {"-", {Mixer::none, MlpKind::dense}},          {"E", {Mixer::none, MlpKind::moe}},
      {"mamba", {Mixer::mamba, MlpKind::none}},      {"attention", {Mixer::attention, MlpKind::none}},
      {"mlp", {Mixer::none, MlpKind::dense}},        {"moe", {Mixer::none, MlpKind::moe}},
      {"attention+mlp", {Mixer::attention, MlpKind::dense}}, {"attention+moe", {Mixer::attention, MlpKind::moe}},
      {"mamba+mlp", {Mixer::mamba, MlpKind::dense}}, {"mamba+moe", {Mixer::mamba, MlpKind::moe}},
      {"linear", {Mixer::linear, MlpKind::none}},    {"linear+mlp", {Mixer::linear, MlpKind::dense}},
      {"linear+moe", {Mixer::linear, MlpKind::moe}},
  };
  for (const Named& n : kNames)
    if (name == n.name) return *out = n.kind, true;
  return false;
}

namespace {

const char* kNameList =
    "mamba, attention, linear, mlp, moe, attention+mlp, attention+moe, mamba+mlp, mamba+moe, linear+mlp, linear+moe";

// The short form {every: k, layer: A, others: B}: layer i (0-based) is A when i % k == k − 1.
std::vector<LayerKind> every_kth(const YamlReader& p, int layers) {
  p.allow_only({"every", "layer", "others"});
  for (const char* k : {"every", "layer", "others"})
    if (!p.has(k)) p.fail(k, "is required in the short form {every: k, layer: A, others: B} (A on every k-th layer)");
  const int every = p.integer("every", 1, 1, layers);
  LayerKind a, b;
  if (!parse_layer_name(p.text("layer", ""), &a)) p.fail("layer", fmt::format("must be one of {}", kNameList));
  if (!parse_layer_name(p.text("others", ""), &b)) p.fail("others", fmt::format("must be one of {}", kNameList));
  std::vector<LayerKind> out(static_cast<std::size_t>(layers), b);
  for (int i = every - 1; i < layers; i += every) out[static_cast<std::size_t>(i)] = a;
  return out;
}

std::vector<LayerKind> read_pattern(const YamlReader& r, int layers) {
  const YAML::Node n = r.raw("layer_pattern");
  if (n.IsMap()) return every_kth(r.child("layer_pattern"), layers);
  std::vector<LayerKind> out;
  if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i) {
      LayerKind k;
      if (!n[i].IsScalar() || !parse_layer_name(n[i].as<std::string>(), &k))
        r.fail_at(n[i].Mark(), "layer_pattern", fmt::format("entry {} must be one of {}", i + 1, kNameList));
      out.push_back(k);
    }
  } else {
    std::string error;
    out = parse_layer_pattern(r.text("layer_pattern", ""), &error);
    if (!error.empty()) r.fail("layer_pattern", error);
  }
  if (int(out.size()) != layers)
    r.fail("layer_pattern", fmt::format("has {} layers but model.layers is {}", out.size(), layers));
  return out;
}

// Mamba-1 (kind: mamba1): channels = expand · hidden; dt_rank defaults to ceil(hidden / 16), as
// mamba_ssm's and transformers' "auto".
models::MambaSpec read_mamba1(const YamlReader& r, int hidden) {
  r.allow_only({"kind", "state_dim", "expand", "dt_rank", "conv_kernel"});
  if (!r.has("state_dim")) r.fail("state_dim", "is required in model.mamba");
  models::MambaSpec x;
  x.kind = models::MambaKind::mamba1;
  x.state_dim = r.integer("state_dim", 0, 1, 65536);
  x.channels = r.integer("expand", 2, 1, 64) * hidden;
  x.dt_rank = r.integer("dt_rank", (hidden + 15) / 16, 1, 65536);
  x.conv_kernel = r.integer("conv_kernel", 4, 1, 64);
  return x;
}

models::MambaSpec read_mamba(const YamlReader& r, int hidden) {
  if (r.enum_choice("kind", models::kMambaKindNames, models::MambaKind::mamba2) == models::MambaKind::mamba1)
    return read_mamba1(r, hidden);
  r.allow_only({"kind", "state_dim", "heads", "head_dim", "groups", "conv_kernel", "chunk"});
  for (const char* k : {"state_dim", "heads"})
    if (!r.has(k)) r.fail(k, "is required in model.mamba (kind mamba2)");
  models::MambaSpec x;
  x.state_dim = r.integer("state_dim", 0, 1, 65536);
  x.heads = r.integer("heads", 0, 1, 65536);
  x.head_dim = r.integer("head_dim", 64, 1, 65536);
  x.groups = r.integer("groups", 1, 1, 65536);
  x.conv_kernel = r.integer("conv_kernel", 4, 1, 64);
  x.chunk = r.integer("chunk", 128, 1, 65536);
  if (x.heads % x.groups != 0)
    r.fail("groups", fmt::format("heads ({}) must be a multiple of groups ({}): B and C are shared by heads/groups heads",
                                 x.heads, x.groups));
  return x;
}

models::LinearAttentionSpec read_linear(const YamlReader& r) {
  r.allow_only({"kind", "heads", "key_heads", "head_dim", "value_head_dim", "conv_kernel", "chunk"});
  for (const char* k : {"kind", "heads"})
    if (!r.has(k)) r.fail(k, "is required in model.linear_attention");
  models::LinearAttentionSpec x;
  x.kind = r.enum_choice("kind", models::kLinearKindNames, models::LinearKind::gated_deltanet);
  x.heads = r.integer("heads", 0, 1, 65536);
  x.key_heads = r.integer("key_heads", x.heads, 1, 65536);
  x.head_dim = r.integer("head_dim", 128, 1, 65536);
  x.value_head_dim = r.integer("value_head_dim", x.head_dim, 1, 65536);
  x.conv_kernel = r.integer("conv_kernel", 4, 1, 64);
  x.chunk = r.integer("chunk", 64, 1, 65536);
  if (x.heads % x.key_heads != 0)
    r.fail("key_heads", fmt::format("heads ({}) must be a multiple of key_heads ({}): each query/key head serves "
                                    "heads/key_heads value heads", x.heads, x.key_heads));
  if (x.kind == models::LinearKind::kda && x.key_heads != x.heads)
    r.fail("key_heads", "must equal heads for kind kda (KDA has one key head per value head)");
  return x;
}

models::SparseAttentionSpec read_sparse(const YamlReader& r) {
  r.allow_only({"kind", "index_heads", "index_head_dim", "top_k_tokens"});
  for (const char* k : {"kind", "index_heads", "top_k_tokens"})
    if (!r.has(k)) r.fail(k, "is required in model.sparse_attention");
  r.choice("kind", {"dsa"}, 0);
  models::SparseAttentionSpec x;
  x.index_heads = r.integer("index_heads", 0, 1, 4096);
  x.index_head_dim = r.integer("index_head_dim", 128, 1, 4096);
  x.top_k_tokens = r.integer("top_k_tokens", 2048, 1, 1 << 24);
  return x;
}

// The per-layer ratios: one per main-stack layer, optionally one more per MTP module; each 0 or
// at least 2; at most one ratio besides index_ratio (the block kinds are window, CSA and HCA).
std::vector<int> read_ratios(const YamlReader& r, const models::ModelSpec& m, int index_ratio) {
  const YAML::Node n = r.raw("ratios");
  if (!n.IsSequence())
    r.fail("ratios", fmt::format("must be a list of {} (or {}, with the MTP modules') compress ratios", m.layers,
                                 m.layers + m.mtp_layers));
  std::vector<int> out;
  int other = 0;
  for (std::size_t i = 0; i < n.size(); ++i) {
    int v = -1;
    if (n[i].IsScalar()) std::from_chars(n[i].Scalar().data(), n[i].Scalar().data() + n[i].Scalar().size(), v);
    // The key's location, not the entry's: a model merged over its preset keeps no entry marks.
    if (v != 0 && (v < 2 || v > 65536))
      r.fail("ratios", fmt::format("entry {} must be 0 (window only) or a ratio in 2..65536", i + 1));
    if (v > 0 && v != index_ratio && other > 0 && v != other)
      r.fail("ratios", fmt::format("entry {} is a second unindexed ratio ({} and {}): one HCA ratio is modelled", i + 1,
                                   other, v));
    if (v > 0 && v != index_ratio) other = v;
    out.push_back(v);
  }
  if (int(out.size()) != m.layers && int(out.size()) != m.layers + m.mtp_layers)
    r.fail("ratios", fmt::format("has {} entries; model.layers is {} (with the MTP modules: {})", out.size(), m.layers,
                                 m.layers + m.mtp_layers));
  return out;
}

models::CompressedAttentionSpec read_compressed(const YamlReader& r, const models::ModelSpec& m) {
  r.allow_only({"kind", "ratios", "window", "q_lora_rank", "o_groups", "o_lora_rank", "rope_dim", "index_ratio",
                "index_heads", "index_head_dim", "top_k"});
  for (const char* k : {"kind", "ratios", "q_lora_rank", "o_lora_rank", "index_heads"})
    if (!r.has(k)) r.fail(k, "is required in model.compressed_attention");
  r.choice("kind", {"deepseek_v4"}, 0);
  models::CompressedAttentionSpec x;
  x.window = r.integer("window", 128, 1, 1 << 24);
  x.q_lora_rank = r.integer("q_lora_rank", 0, 1, 65536);
  x.o_groups = r.integer("o_groups", 1, 1, 4096);
  x.o_lora_rank = r.integer("o_lora_rank", 0, 1, 65536);
  x.rope_dim = r.integer("rope_dim", 64, 0, m.head_dim());
  x.index_ratio = r.integer("index_ratio", 4, 2, 65536);
  x.index_heads = r.integer("index_heads", 0, 1, 4096);
  x.index_head_dim = r.integer("index_head_dim", 128, 1, 4096);
  x.top_k = r.integer("top_k", 512, 1, 1 << 24);
  x.ratios = read_ratios(r, m, x.index_ratio);
  if (m.heads % x.o_groups != 0)
    r.fail("o_groups", fmt::format("must divide model.heads ({}): each group projects heads/o_groups heads", m.heads));
  return x;
}

models::HyperConnections read_hyper(const YamlReader& r) {
  r.allow_only({"streams", "sinkhorn_iters"});
  if (!r.has("streams")) r.fail("streams", "is required in model.hyper_connections");
  models::HyperConnections x;
  x.streams = r.integer("streams", 0, 2, 64);
  x.sinkhorn_iters = r.integer("sinkhorn_iters", 20, 0, 1000);
  return x;
}

// model.compressed_attention replaces the attention's projections and core: it excludes the
// other attention variants; hyper-connections are modelled on it (DeepSeek-V4) only.
void read_v4(const YamlReader& r, models::ModelSpec* m) {
  if (r.has("compressed_attention")) {
    const YamlReader c = r.child("compressed_attention");
    for (const char* k : {"mla", "sparse_attention", "sliding_window", "layer_pattern"})
      if (r.has(k)) r.fail("compressed_attention", fmt::format("cannot be given together with model.{}", k));
    if (m->kv_heads != 1)
      r.fail("compressed_attention",
             fmt::format("needs model.kv_heads: 1 (one head is key and value; got {})", m->kv_heads));
    m->compressed_attention = read_compressed(c, *m);
  }
  if (r.has("hyper_connections")) {
    if (!m->compressed_attention.enabled())
      r.fail("hyper_connections", "is modelled with model.compressed_attention only (DeepSeek-V4's blocks)");
    m->hyper_connections = read_hyper(r.child("hyper_connections"));
  }
}

}  // namespace

void read_hybrid(const YamlReader& r, models::ModelSpec* m) {
  read_v4(r, m);
  if (r.has("mamba")) m->mamba = read_mamba(r.child("mamba"), m->hidden);
  if (r.has("linear_attention")) m->linear_attention = read_linear(r.child("linear_attention"));
  if (r.has("sparse_attention")) {
    m->sparse_attention = read_sparse(r.child("sparse_attention"));
    if (!m->mla.enabled())
      r.fail("sparse_attention", "needs model.mla: DSA is modelled on MLA (its MQA mode), as DeepSeek-V3.2 runs it");
    if (m->sliding_window.enabled()) r.fail("sparse_attention", "cannot be given together with model.sliding_window");
  }
  if (!r.has("layer_pattern")) {
    if (m->mamba.enabled()) r.fail("mamba", "needs model.layer_pattern with Mamba layers (M)");
    if (m->linear_attention.enabled()) r.fail("linear_attention", "needs model.layer_pattern with linear-attention layers (linear, linear+moe, ...)");
    return;
  }
  m->layer_pattern = read_pattern(r, m->layers);
  int mamba = 0, moe = 0, linear = 0;
  for (const LayerKind& k : m->layer_pattern)
    mamba += k.mixer == Mixer::mamba, moe += k.mlp == MlpKind::moe, linear += k.mixer == Mixer::linear;
  if (linear > 0 && !m->linear_attention.enabled())
    r.fail("layer_pattern", fmt::format("has {} linear-attention layers but model.linear_attention is not given", linear));
  if (linear == 0 && m->linear_attention.enabled())
    r.fail("linear_attention", "is given but model.layer_pattern has no linear-attention layer");
  if (mamba > 0 && !m->mamba.enabled())
    r.fail("layer_pattern", fmt::format("has {} Mamba layers but model.mamba is not given", mamba));
  if (mamba == 0 && m->mamba.enabled()) r.fail("mamba", "is given but model.layer_pattern has no Mamba layer");
  if (moe > 0 && !m->moe.enabled()) r.fail("layer_pattern", fmt::format("has {} MoE layers but model.moe is not given", moe));
  if (moe == 0 && m->moe.enabled()) r.fail("moe", "is given but model.layer_pattern has no MoE layer (E)");
  if (m->moe.enabled()) {
    const YamlReader e = r.child("moe");
    for (const char* k : {"dense_layers", "frequency"})
      if (e.has(k)) e.fail(k, "cannot be given with model.layer_pattern, which says which layers are MoE");
  }
  if (m->sliding_window.enabled())
    r.fail("sliding_window", "is not supported together with model.layer_pattern (give the attention layers' window per pattern: not modelled)");
}

}  // namespace clustersim::scenarios
