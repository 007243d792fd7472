#include "models/model_spec.hpp"

namespace clustersim::models {

int ModelSpec::moe_layer_count() const {
  int n = 0;
  for (int i = 0; i < layers; ++i) n += moe_layer(i) ? 1 : 0;
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
  const double q = l.q_lora_rank > 0 ? h * l.q_lora_rank + double(l.q_lora_rank) * a * m.qk_head_dim()
                                     : h * a * m.qk_head_dim();
  return q + h * (l.kv_lora_rank + l.qk_rope_head_dim) +
         double(l.kv_lora_rank) * a * (l.qk_nope_head_dim + l.v_head_dim) + a * l.v_head_dim * h;
}

double mlp_matmul(const ModelSpec& m, double ffn) { return (gated(m.activation) ? 3.0 : 2.0) * m.hidden * ffn; }

double router_params(const ModelSpec& m) {
  return double(m.hidden) * m.moe.experts + (m.bias ? m.moe.experts : 0);
}

struct Block {
  double total = 0, active = 0, matmul = 0, active_matmul = 0;
};

// One block with a dense or an MoE MLP.
Block block(const ModelSpec& m, bool moe) {
  const double attn = attention_params(m), attn_mm = attention_matmul(m), norms = 2 * norm_params(m, m.hidden);
  Block b;
  if (!moe) {
    b.total = b.active = attn + mlp_params(m, m.ffn_hidden) + norms;
    b.matmul = b.active_matmul = attn_mm + mlp_matmul(m, m.ffn_hidden);
    return b;
  }
  const double ef = m.moe.expert_ffn_hidden, used = m.moe.top_k + m.moe.shared_experts;
  const double router = router_params(m), router_mm = double(m.hidden) * m.moe.experts;
  b.total = attn + (m.moe.experts + m.moe.shared_experts) * mlp_params(m, ef) + router + norms;
  b.active = attn + used * mlp_params(m, ef) + router + norms;
  b.matmul = attn_mm + (m.moe.experts + m.moe.shared_experts) * mlp_matmul(m, ef) + router_mm;
  b.active_matmul = attn_mm + used * mlp_matmul(m, ef) + router_mm;
  return b;
}

}  // namespace

double attention_params(const ModelSpec& m) {
  double p = attention_matmul(m);
  if (m.mla.enabled()) {
    p += norm_params(m, m.mla.kv_lora_rank) + (m.mla.q_lora_rank > 0 ? norm_params(m, m.mla.q_lora_rank) : 0);
  } else if (m.has_qkv_bias()) {
    p += (m.heads + 2.0 * m.kv_heads) * m.head_dim();
  }
  if (m.bias) p += m.hidden;  // output projection bias
  return p;
}

double mlp_params(const ModelSpec& m, double ffn) {
  const double bias = m.bias ? (gated(m.activation) ? 2 * ffn : ffn) + m.hidden : 0.0;
  return mlp_matmul(m, ffn) + bias;
}

ParamCount count_params(const ModelSpec& m, int seq_len) {
  const double h = m.hidden, v = m.vocab;
  ParamCount p;
  // Per-scenario work on the sweep path: two block kinds, counted, not a loop over blocks.
  const double n_moe = m.moe_layer_count(), n_dense = m.layers - n_moe;
  const Block dense = block(m, false), moe = n_moe > 0 ? block(m, true) : Block{};
  const double stack = n_dense * dense.total + n_moe * moe.total;
  const double stack_active = n_dense * dense.active + n_moe * moe.active;
  const double stack_mm = n_dense * dense.matmul + n_moe * moe.matmul;
  const double stack_active_mm = n_dense * dense.active_matmul + n_moe * moe.active_matmul;
  p.attention = attention_params(m);
  p.dense_layer = dense.total;
  if (m.is_moe()) {
    p.expert = mlp_params(m, m.moe.expert_ffn_hidden);
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
