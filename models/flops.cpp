#include "models/flops.hpp"

#include <algorithm>

namespace clustersim::models {

double attention_keys_fraction(double window, double seq_len) {
  if (window <= 0 || window >= seq_len) return 1.0;
  const double r = window / seq_len;
  return 2 * r - r * r;
}

double dsa_flop_per_token(const ModelSpec& m, double s) {
  const SparseAttentionSpec& x = m.sparse_attention;
  const double keys = std::min<double>(x.top_k_tokens, s), latent = m.mla.kv_lora_rank;
  return 2 * s * x.index_heads * x.index_head_dim + 2 * keys * m.heads * (latent + m.mla.qk_rope_head_dim + latent);
}

namespace {

// The mean compressed entries a query attends to (compressed_mean_keys without the window).
double compressed_mean_entries(const CompressedAttentionSpec& c, double s, int ratio) {
  if (ratio == 0) return 0;
  const double all = s / (2.0 * ratio), k = c.top_k;  // the mean visible entries: s/ratio at the end
  if (!c.indexed(ratio) || s / ratio <= k) return all;
  return k - ratio * k * k / (2 * s);
}

}  // namespace

double compressed_mean_keys(const CompressedAttentionSpec& c, double s, int ratio) {
  const double w = c.window;
  const double window = s <= w ? (s + 1) / 2 : w - w * (w - 1) / (2 * s);
  return window + compressed_mean_entries(c, s, ratio);
}

double compressed_flop_per_token(const ModelSpec& m, double s, int ratio) {
  const CompressedAttentionSpec& c = m.compressed_attention;
  const double d = m.head_dim(), keys = std::min<double>(c.window, s) + compressed_mean_entries(c, s, ratio);
  const double indexer = c.indexed(ratio) ? 2.0 * (s / ratio) * c.index_heads * c.index_head_dim : 0.0;
  return 2.0 * keys * m.heads * (d + d) + indexer;
}

namespace {

// Forward attention-core FLOPs per token over the main stack (full s², as the formulas count).
double attention_fwd_per_token(const ModelSpec& m, double s) {
  if (m.compressed_attention.enabled()) {
    double sum = 0;
    for (int l = 0; l < m.layers; ++l) sum += compressed_flop_per_token(m, s, m.compressed_attention.ratio(l));
    return sum;
  }
  if (m.sparse_attention.enabled()) return m.mixer_count(Mixer::attention) * dsa_flop_per_token(m, s);
  const double per_layer = 2.0 * s * m.heads * (m.qk_head_dim() + m.v_head_dim());
  const double sliding = m.sliding_layer_count();
  const double frac = attention_keys_fraction(m.sliding_window.tokens, s);
  const double full = m.mixer_count(Mixer::attention) - sliding;
  return per_layer * (full + sliding * frac);
}

}  // namespace

double ssd_flop_per_token(const MambaSpec& x) {
  const double Q = x.chunk, N = x.state_dim, P = x.head_dim, H = x.heads, G = x.groups;
  return 2 * Q * N * G + 2 * Q * P * H + 4 * N * P * H + 2 * H * P * N / Q;
}

double mamba_scan_flop_per_token(const MambaSpec& x) {
  return x.mamba1() ? 7.0 * x.inner() * x.state_dim : ssd_flop_per_token(x);
}

double delta_rule_flop_per_token(const LinearAttentionSpec& x) {
  const double C = x.chunk, K = x.head_dim, V = x.v_dim(), H = x.heads;
  return H * (2 * C * (3 * K + 2 * V) + 2 * C * C / 3 + 6 * K * V);
}

FlopsPerToken flops_per_token(const ModelSpec& m, const TrainingSpec& t, double recompute_share) {
  const ParamCount p = count_params(m, t.seq_len);
  const double s = t.seq_len;
  const double core_fwd = attention_fwd_per_token(m, s);  // what selective recompute (core_attn) reruns
  const double attn_fwd = core_fwd + m.mixer_count(Mixer::mamba) * mamba_scan_flop_per_token(m.mamba) +
                          m.mixer_count(Mixer::linear) * delta_rule_flop_per_token(m.linear_attention);
  // An MTP module's block attends over the full sequence like a main-stack layer.
  double mtp_attn_fwd =
      m.mtp_layers * (m.sparse_attention.enabled() ? dsa_flop_per_token(m, s)
                                                   : 2.0 * s * m.heads * (m.qk_head_dim() + m.v_head_dim()));
  if (m.compressed_attention.enabled()) {
    mtp_attn_fwd = 0;
    for (int j = 0; j < m.mtp_layers; ++j)
      mtp_attn_fwd += compressed_flop_per_token(m, s, m.compressed_attention.ratio(m.layers + j));
  }
  const double non_embedding_active = p.active - p.embedding - p.lm_head;
  FlopsPerToken f;
  if (t.flops_formula == FlopsFormula::palm) {
    f.model = 6.0 * non_embedding_active + 3.0 * attn_fwd;
    f.formula = m.is_moe() ? "palm: 6*N_active_non_embedding + 12*L*h*s" : "palm: 6*N_non_embedding + 12*L*h*s";
  } else {
    f.model = 6.0 * (p.active_matmul + p.mtp_active_matmul) + 3.0 * (attn_fwd + mtp_attn_fwd);
    f.formula = m.mtp_layers > 0 ? "megatron: 6*N_active_matmul + 12*L*s*h_q (+ MTP modules)"
                : m.is_moe()     ? "megatron: 6*N_active_matmul + 12*L*s*h_q"
                                 : "megatron: 6*N_matmul + 12*L*s*h_q";
  }
  const double layer_matmul_fwd = 2.0 * (p.active_matmul - double(m.vocab) * m.hidden);
  double recompute = 0;
  if (t.recompute == Recompute::full) recompute = (layer_matmul_fwd + attn_fwd) * recompute_share;
  if (t.recompute == Recompute::selective) recompute = core_fwd;
  f.hardware = f.model + recompute;
  return f;
}

}  // namespace clustersim::models
