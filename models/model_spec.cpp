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

// One block with a dense or an MoE MLP.
Block block(const ModelSpec& m, bool moe) { return layer_block(m, {Mixer::attention, moe ? MlpKind::moe : MlpKind::dense}); }

}  // namespace

double attention_params(const ModelSpec& m) {
  double p = attention_matmul(m);
  if (m.mla.enabled()) {
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
  const double all = layer_block(m, k).total;
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
  if (m.hybrid()) {
    stack = stack_active = stack_mm = stack_active_mm = 0;
    for (int i = 0; i < m.layers; ++i) {
      const Block b = layer_block(m, m.layer_kind(i));
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
  p.total = stack + p.embedding + p.lm_head + p.final_norm;
  p.non_embedding = stack + p.final_norm;
  p.matmul = stack_mm + v * h;
  p.active = stack_active + p.embedding + p.lm_head + p.final_norm;
  p.active_matmul = stack_active_mm + v * h;
  // DeepSeek-V3 §2.2: each MTP module has RMSNorms of the hidden state and of the next token's
  // embedding, a [2h, h] projection and one block; embedding and output head are shared (the
  // head's final norm is the module's own).
  for (int j = 0; j < m.mtp_layers; ++j) {
    const Block b = m.moe_layer(m.layers + j) ? moe : dense;
    p.mtp += 2 * h * h + 3 * norm_params(m, h) + b.total;
    p.mtp_active_matmul += 2 * h * h + b.active_matmul + v * h;
  }
  return p;
}

}  // namespace clustersim::models
