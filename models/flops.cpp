#include "models/flops.hpp"

namespace clustersim::models {

FlopsPerToken flops_per_token(const ModelSpec& m, const TrainingSpec& t) {
  const ParamCount p = count_params(m, t.seq_len);
  const double q_width = double(m.heads) * m.head_dim();
  const double attn_fwd = 4.0 * m.layers * double(t.seq_len) * q_width;  // QKᵀ + A·V, full s²
  FlopsPerToken f;
  if (t.flops_formula == FlopsFormula::palm) {
    f.model = 6.0 * p.non_embedding + 3.0 * attn_fwd;
    f.formula = "palm: 6*N_non_embedding + 12*L*h*s";
  } else {
    f.model = 6.0 * p.matmul + 3.0 * attn_fwd;
    f.formula = "megatron: 6*N_matmul + 12*L*s*h_q";
  }
  const double layer_matmul_fwd = 2.0 * (p.matmul - double(m.vocab) * m.hidden);
  double recompute = 0;
  if (t.recompute == Recompute::full) recompute = layer_matmul_fwd + attn_fwd;
  if (t.recompute == Recompute::selective) recompute = attn_fwd;
  f.hardware = f.model + recompute;
  return f;
}

}  // namespace clustersim::models
