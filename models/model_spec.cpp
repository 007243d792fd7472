#include "models/model_spec.hpp"

#include <algorithm>

namespace clustersim::models {

int ModelSpec::moe_layer_count() const {
  // moe_layer()'s rule counted in closed form: after the dense layers, every frequency-th.
  if (!moe.enabled()) return 0;
  if (!hybrid()) return std::max(0, layers - moe.dense_layers) / moe.frequency;
  int n = 0;
  for (int i = 0; i < layers; ++i) n += moe_layer(i) ? 1 : 0;
  return n;
}

int ModelSpec::mixer_count(Mixer x) const {
  int n = 0;
  for (int i = 0; i < layers; ++i) n += layer_kind(i).mixer == x ? 1 : 0;
  return n;
}

int ModelSpec::sliding_layer_count() const {
  int n = 0;
  for (int i = 0; i < layers; ++i) n += sliding_layer(i) ? 1 : 0;
  return n;
}

double norm_params(const ModelSpec& m, double width) {
  return m.norm == Norm::layernorm ? 2 * width : width;  // LayerNorm has a bias, RMSNorm not
}

namespace {

// Weights of the attention projections (no biases, no norms).
double attention_matmul(const ModelSpec& m) {
  const double h = m.hidden, a = m.heads;
  if (const CompressedAttentionSpec& c = m.compressed_attention; c.enabled()) {
    // wq_a, wq_b; wkv (one head, key and value); wo_a (o_groups blocks of heads·d/o_groups →
    // o_lora_rank), wo_b. The compressors and the indexer: compressor_matmul.
    const double d = m.head_dim();
    return h * c.q_lora_rank + double(c.q_lora_rank) * a * d + h * d + a * d * c.o_lora_rank +
           double(c.o_groups) * c.o_lora_rank * h;
  }
  if (!m.mla.enabled()) {
    const double d = m.head_dim();
    return h * (a + 2.0 * m.kv_heads) * d + a * d * h;
  }
  // HF DeepseekV3Attention: q_a_proj/q_b_proj (or q_proj), kv_a_proj_with_mqa (latent + shared
  // rope key), kv_b_proj (per-head nope key and value), o_proj.
  const auto& l = m.mla;
  const SparseAttentionSpec& x = m.sparse_attention;  // the DSA indexer: wq_b, wk, weights_proj
  const double indexer = x.enabled() ? (l.q_lora_rank > 0 ? l.q_lora_rank : h) * double(x.index_heads) * x.index_head_dim +
                                           h * (x.index_head_dim + double(x.index_heads))
                                     : 0.0;
  const double q = l.q_lora_rank > 0 ? h * l.q_lora_rank + double(l.q_lora_rank) * a * m.qk_head_dim()
                                     : h * a * m.qk_head_dim();
  return indexer + q + h * (l.kv_lora_rank + l.qk_rope_head_dim) +
         double(l.kv_lora_rank) * a * (l.qk_nope_head_dim + l.v_head_dim) + a * l.v_head_dim * h;
}

// Layer i's compressor (wkv and wgate, twice as wide for CSA's overlapping pools) and, on a CSA
// layer, the indexer's wq_b, weights_proj and its own overlapping compressor.
double compressor_matmul(const ModelSpec& m, int layer) {
  const CompressedAttentionSpec& c = m.compressed_attention;
  const int r = c.ratio(layer);
  if (r == 0) return 0;
  const double h = m.hidden, d = m.head_dim(), dI = c.index_head_dim, HI = c.index_heads;
  if (!c.indexed(r)) return h * 2 * d;
  return h * 4 * d + double(c.q_lora_rank) * HI * dI + h * HI + h * 4 * dI;
}

// Its other weights: the learned pool positions (ape: r × the gate width) and the entries'
// RMSNorms, the indexer's too.
double compressor_other(const ModelSpec& m, int layer) {
  const CompressedAttentionSpec& c = m.compressed_attention;
  const int r = c.ratio(layer);
  if (r == 0) return 0;
  const double d = m.head_dim(), dI = c.index_head_dim;
  if (!c.indexed(r)) return r * d + d;
  return r * 2 * d + d + r * 2 * dI + dI;
}

// Per block: two mHC sites, each a [streams·h → (2 + streams)·streams] fp32 mapping with its
// bias and three scales (Megatron-Core dev hyper_connection.py: mapping_proj, alpha_*).
double hyper_connection_params(const ModelSpec& m) {
  const HyperConnections& x = m.hyper_connections;
  if (!x.enabled()) return 0;
  const double n = x.streams, out = (2 + n) * n;
  return 2 * (n * m.hidden * out + out + 3);
}

double mlp_matmul(const ModelSpec& m, double ffn) { return (gated(m.activation) ? 3.0 : 2.0) * m.hidden * ffn; }

double router_params(const ModelSpec& m) {
  return double(m.hidden) * m.moe.experts + (m.bias ? m.moe.experts : 0);
}

struct Block {
  double total = 0, active = 0, matmul = 0, active_matmul = 0;
};

// The latent projections around the routed experts (h → latent, latent → h).
double latent_params(const ModelSpec& m) { return m.moe.latent_dim > 0 ? 2.0 * m.hidden * m.moe.latent_dim : 0.0; }

// One routed expert's matmul weights on the width the experts work on.
double expert_matmul(const ModelSpec& m) {
  return (gated(m.activation) ? 3.0 : 2.0) * m.expert_width() * m.moe.expert_ffn_hidden;
}

// The mixer of a layer (its pre-norm included).
Block mixer_block(const ModelSpec& m, Mixer x) {
  Block b;
  if (x == Mixer::none) return b;
  const double norm = norm_params(m, m.hidden);
  if (x == Mixer::attention) {
    b.total = b.active = attention_params(m) + norm;
    b.matmul = b.active_matmul = attention_matmul(m);
  } else if (x == Mixer::linear) {
    b.total = b.active = linear_attention_params(m) + norm;
    b.matmul = b.active_matmul = m.linear_attention.matmul_params(m.hidden);
  } else {
    b.total = b.active = mamba_params(m) + norm;
    b.matmul = b.active_matmul = m.mamba.matmul_params(m.hidden);
  }
  return b;
}

// The MLP of a layer (its pre-norm included): dense, or MoE with every expert counted in total.
Block mlp_block(const ModelSpec& m, MlpKind x) {
  Block b;
  if (x == MlpKind::none) return b;
  const double norm = norm_params(m, m.hidden);
  if (x == MlpKind::dense) {
    b.total = b.active = mlp_params(m, m.ffn_hidden) + norm;
    b.matmul = b.active_matmul = mlp_matmul(m, m.ffn_hidden);
    return b;
  }
  const double ef = m.moe.expert_ffn_hidden, shared = m.moe.shared_experts, latent = latent_params(m);
  const double router = router_params(m), router_mm = double(m.hidden) * m.moe.experts;
  const double fixed = router + shared * mlp_params(m, ef) + latent + norm;
  const double fixed_mm = router_mm + shared * mlp_matmul(m, ef) + latent;
  b.total = fixed + m.moe.experts * expert_params(m);
  b.active = fixed + m.moe.top_k * expert_params(m);
  b.matmul = fixed_mm + m.moe.experts * expert_matmul(m);
  b.active_matmul = fixed_mm + m.moe.top_k * expert_matmul(m);
  return b;
}

Block layer_block(const ModelSpec& m, LayerKind k) {
  const Block a = mixer_block(m, k.mixer), f = mlp_block(m, k.mlp);
  return {a.total + f.total, a.active + f.active, a.matmul + f.matmul, a.active_matmul + f.active_matmul};
}

// Layer i's block, with what varies by layer under compressed attention and hyper-connections.
Block layer_block_at(const ModelSpec& m, int i) {
  Block b = layer_block(m, m.layer_kind(i));
  const double mm = compressor_matmul(m, i), other = compressor_other(m, i) + hyper_connection_params(m);
  b.total += mm + other, b.active += mm + other, b.matmul += mm, b.active_matmul += mm;
  return b;
}

// The stack is summed layer by layer (hybrid patterns, per-layer compress ratios).
bool per_layer_stack(const ModelSpec& m) { return m.hybrid() || m.compressed_attention.enabled(); }

// One block with a dense or an MoE MLP.
Block block(const ModelSpec& m, bool moe) { return layer_block(m, {Mixer::attention, moe ? MlpKind::moe : MlpKind::dense}); }

}  // namespace

double attention_params(const ModelSpec& m) {
  double p = attention_matmul(m);
  if (const CompressedAttentionSpec& c = m.compressed_attention; c.enabled()) {
    p += norm_params(m, c.q_lora_rank) + norm_params(m, m.head_dim()) + m.heads;  // q_norm, kv_norm, sinks
  } else if (m.mla.enabled()) {
    p += norm_params(m, m.mla.kv_lora_rank) + (m.mla.q_lora_rank > 0 ? norm_params(m, m.mla.q_lora_rank) : 0);
    if (m.sparse_attention.enabled()) p += 2.0 * m.sparse_attention.index_head_dim;  // the indexer's key LayerNorm
  } else if (m.has_qkv_bias()) {
    p += (m.heads + 2.0 * m.kv_heads) * m.head_dim();
  }
  if (m.bias) p += m.hidden;  // output projection bias
  return p;
}

double mamba_params(const ModelSpec& m) {
  const MambaSpec& x = m.mamba;
  const double conv = x.conv_dim() * (x.conv_kernel + 1.0);  // depthwise taps + bias
  // mamba1: dt_proj's bias, A_log (channels × state) and D, and Jamba's RMSNorms on dt, B and C.
  if (x.mamba1()) return x.matmul_params(m.hidden) + conv + x.inner() * (x.state_dim + 2.0) + x.x_proj_width();
  // mamba2: A_log, D and dt_bias per head, the gated norm's weight.
  return x.matmul_params(m.hidden) + conv + 3.0 * x.heads + x.inner();
}

double linear_attention_params(const ModelSpec& m) {
  const LinearAttentionSpec& x = m.linear_attention;
  const double decay = x.kind == LinearKind::kda ? x.heads + x.key_dim() : 2.0 * x.heads;
  return x.matmul_params(m.hidden) + x.conv_dim() * x.conv_kernel + decay + x.v_dim();
}

double expert_params(const ModelSpec& m) {
  const double ef = m.moe.expert_ffn_hidden, w = m.expert_width();
  const double bias = m.bias ? (gated(m.activation) ? 2 * ef : ef) + w : 0.0;
  return expert_matmul(m) + bias;
}

double layer_dense_params(const ModelSpec& m, int layer) {
  const LayerKind k = m.layer_kind(layer);
  const double all = layer_block_at(m, layer).total;
  return k.mlp == MlpKind::moe ? all - double(m.moe.experts) * expert_params(m) : all;
}

double mlp_params(const ModelSpec& m, double ffn) {
  const double bias = m.bias ? (gated(m.activation) ? 2 * ffn : ffn) + m.hidden : 0.0;
  return mlp_matmul(m, ffn) + bias;
}

ParamCount count_params(const ModelSpec& m, int seq_len) {
  const double h = m.hidden, v = m.vocab;
  ParamCount p;
  // Per-scenario work on the sweep path: two block kinds, counted, not a loop over blocks —
  // except for a hybrid stack, whose layers are summed one by one.
  const double n_moe = m.moe_layer_count(), n_dense = m.layers - n_moe;
  const Block dense = block(m, false), moe = n_moe > 0 ? block(m, true) : Block{};
  double stack = n_dense * dense.total + n_moe * moe.total;
  double stack_active = n_dense * dense.active + n_moe * moe.active;
  double stack_mm = n_dense * dense.matmul + n_moe * moe.matmul;
  double stack_active_mm = n_dense * dense.active_matmul + n_moe * moe.active_matmul;
  if (per_layer_stack(m)) {
    stack = stack_active = stack_mm = stack_active_mm = 0;
    for (int i = 0; i < m.layers; ++i) {
      const Block b = layer_block_at(m, i);
      stack += b.total, stack_active += b.active, stack_mm += b.matmul, stack_active_mm += b.active_matmul;
    }
  }
  p.attention = attention_params(m);
  p.dense_layer = dense.total;
  if (m.is_moe()) {
    p.expert = expert_params(m);
    p.experts = n_moe * m.moe.experts * p.expert;
    p.moe_layer = moe.total;
  }
  p.per_layer = stack / m.layers;
  p.embedding = v * h + (m.position == Position::learned ? double(seq_len) * h : 0.0);
  p.lm_head = m.tied_embeddings ? 0.0 : v * h;
  p.final_norm = norm_params(m, h);
  if (m.hyper_connections.enabled()) {  // the head's collapse of the streams (hc_head: hc_fn, base, scale)
    const double n = m.hyper_connections.streams;
    p.final_norm += n * n * h + n + 1;
  }
  p.total = stack + p.embedding + p.lm_head + p.final_norm;
  p.non_embedding = stack + p.final_norm;
  p.matmul = stack_mm + v * h;
  p.active = stack_active + p.embedding + p.lm_head + p.final_norm;
  p.active_matmul = stack_active_mm + v * h;
  // DeepSeek-V3 §2.2: each MTP module has RMSNorms of the hidden state and of the next token's
  // embedding, a [2h, h] projection and one block; embedding and output head are shared (the
  // head's final norm is the module's own).
  for (int j = 0; j < m.mtp_layers; ++j) {
    const Block b = per_layer_stack(m) ? layer_block_at(m, m.layers + j) : m.moe_layer(m.layers + j) ? moe : dense;
    p.mtp += 2 * h * h + 3 * norm_params(m, h) + b.total;
    p.mtp_active_matmul += 2 * h * h + b.active_matmul + v * h;
  }
  return p;
}

}  // namespace clustersim::models
