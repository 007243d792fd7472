#include "models/dsa_ops.hpp"

#include <algorithm>
#include <cmath>

#include "models/detail/kernel_builder.hpp"

namespace clustersim::models {

double dsa_mean_keys(double s, double top_k) {
  if (s <= top_k) return (s + 1) / 2;
  return top_k - top_k * top_k / (2 * s);
}

void add_dsa_core(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu, MlaOps* o) {
  const KernelBuilder k = KernelBuilder::training(gpu, t, p);
  const KernelBuilder fp8{gpu, hardware::Precision::fp8, t.ideal};  // the indexer's scores run in FP8
  const KernelBuilder bf16{gpu, hardware::Precision::bf16, t.ideal};
  const SparseAttentionSpec& x = m.sparse_attention;
  const auto& a = m.mla;
  const double s = double(t.seq_len) / p.cp, b = t.micro_batch, T = b * s, h = m.hidden;
  const double e = hardware::storage_bytes(t.precision), heads = double(m.heads) / p.tp;
  const double HI = x.index_heads, dI = x.index_head_dim, q_in = a.q_lora_rank > 0 ? a.q_lora_rank : h;
  // Indexer projections: wq_b from the query latent, wk and weights_proj from the hidden.
  k.linear(&o->fwd, &o->bwd, "dsa.indexer.q", T, HI * dI, q_in);
  k.linear(&o->fwd, &o->bwd, "dsa.indexer.k_weights", T, dI + HI, h);
  o->fwd.add(k.memory("dsa.indexer.k_norm", 2 * T * dI * e));
  o->bwd.add(k.memory("dsa.indexer.k_norm.bwd", 3 * T * dI * e));
  // Scores of every query head against every earlier key (the causal half as flash kernels
  // compute it), ReLU and the head weights reduced in the kernel (DeepGEMM fp8_mqa_logits: only
  // the [s, s] fp32 scores leave it): a fused attention-like kernel at the profile's FP8
  // attention rate; then the top-k over each query's scores. Backward of the indexer's KL loss
  // against the main attention: dq and dk of the scores, twice the forward's work, in BF16.
  const double nb = std::ceil(s / 128.0), causal = (nb + 1) / (2 * nb);
  const double score_flop = 2.0 * b * s * s * causal * HI * dI, scores = T * s * causal * 4.0;
  o->fwd.add(fp8.attention("dsa.indexer.scores", score_flop, T * (HI * dI + dI) + scores, s, false));
  o->fwd.add(k.memory("dsa.indexer.topk", scores));
  o->bwd.add(bf16.attention("dsa.indexer.scores.bwd", 2 * score_flop, 2 * (T * (HI * dI + dI) * 2.0) + scores, s, true));
  // The sparse core: MLA in MQA mode (absorbed up projections) over the selected latent keys.
  const double keys = dsa_mean_keys(s, x.top_k_tokens), latent = a.kv_lora_rank, rope = a.qk_rope_head_dim;
  o->attention_flop_fwd = 2.0 * T * keys * heads * (latent + rope + latent);
  const double io = T * heads * (latent + rope) * e + T * keys * (latent + rope) * e + T * heads * latent * e;
  o->fwd.add(k.attention("dsa.sparse_attention", o->attention_flop_fwd, io, s, false));
  o->bwd.add(k.attention("dsa.sparse_attention.bwd", 2.5 * o->attention_flop_fwd, 2 * io, s, true));
  const double kept = T * std::min<double>(x.top_k_tokens, s) * 4.0 + T * (HI * dI + dI) + T * HI * 4.0;
  o->saved_bytes += kept;
  o->saved_bytes_up_proj_recompute += kept;
}

}  // namespace clustersim::models
