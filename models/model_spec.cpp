#include "models/model_spec.hpp"

namespace clustersim::models {

ParamCount count_params(const ModelSpec& m, int seq_len) {
  const double h = m.hidden, f = m.ffn_hidden, v = m.vocab, d = m.head_dim();
  const double qkv_out = (m.heads + 2.0 * m.kv_heads) * d;
  const bool bias = m.has_bias();
  const double norm = bias ? 2 * h : h;  // LayerNorm has a bias, RMSNorm not
  double attn = h * qkv_out + h * h + (bias ? qkv_out + h : 0);
  double mlp = m.activation == Activation::swiglu ? 3 * h * f : 2 * h * f + (bias ? f + h : 0);
  ParamCount p;
  p.per_layer = attn + mlp + 2 * norm;
  p.embedding = v * h + (m.position == Position::learned ? double(seq_len) * h : 0.0);
  p.lm_head = m.tied_embeddings ? 0.0 : v * h;
  p.final_norm = norm;
  p.total = m.layers * p.per_layer + p.embedding + p.lm_head + p.final_norm;
  p.non_embedding = m.layers * p.per_layer + p.final_norm;
  const double layer_matmul = h * qkv_out + h * h +
                              (m.activation == Activation::swiglu ? 3 * h * f : 2 * h * f);
  p.matmul = m.layers * layer_matmul + v * h;
  return p;
}

}  // namespace clustersim::models
