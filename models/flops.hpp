#pragma once
// Model FLOPs per token — the MFU numerator — under the common published definitions.
#include "models/model_spec.hpp"
#include "models/training_spec.hpp"

namespace clustersim::models {

struct FlopsPerToken {
  double model = 0;      ///< by the selected formula; excludes recompute
  double hardware = 0;   ///< model + recomputed forward work (HFU numerator)
  const char* formula = "";
};

/// megatron: 6·N_matmul + 12·L·s·h_q (fwd+bwd of every matmul weight, LM head included, plus
///   QKᵀ and A·V over the full s² — Narayanan et al. 2021 eq. 3, generalized to GQA/SwiGLU by
///   counting weights; equals 72·L·h²·(1 + s/6h + V/12hL) for GPT with ffn = 4h).
/// palm: 6·N_non-embedding + 12·L·h·s (Chowdhery et al. 2022, appendix B).
/// Mixture-of-Experts: N counts the weights one token uses (top_k routed + shared experts and
/// the router: 6·N_active, as DeepSeek-V3 §4.2's 6N and Megatron's MoE FLOPs formula).
/// Attention per layer is 2·s_eff·heads·(d_qk + d_v) forward (12·s·h_q for d_qk = d_v = h_q /
/// heads); MLA uses its qk (nope + rope) and v head widths; sliding-window layers scale the
/// full-square s by the causal-count ratio (see attention_keys_fraction). MTP modules add their
/// projection, block and the shared LM head GEMM (Megatron counts MTP likewise).
/// Recompute adds one forward of the recomputed part: full = (2·N_layers + 4·L·s·h_q),
/// selective = 4·L·s·h_q (attention core only; Korthikanti et al. 2022); full with
/// training.recompute_layers: that times `recompute_share` (models::recompute_share).
FlopsPerToken flops_per_token(const ModelSpec& m, const TrainingSpec& t, double recompute_share = 1.0);

/// Forward FLOPs per token of one Mamba-2 SSD scan in its chunked form (Dao & Gu 2024,
/// arXiv 2405.21060 §6 and its ssd_minimal listing; mamba_ssm ssd_combined.py), chunks of Q
/// tokens, state N, head width P, H heads, G groups:
///   C·Bᵀ inside a chunk (per group, [Q,N]·[N,Q]):        2·Q·N·G
///   (L∘CBᵀ)·X, the in-chunk output (per head, [Q,Q]·[Q,P]): 2·Q·P·H
///   chunk states Bᵀ·X (per head, [N,Q]·[Q,P]):           2·N·P·H
///   the inter-chunk state pass (per chunk, H·P·N):        2·H·P·N/Q
///   output from the states C·h (per head, [Q,N]·[N,P]):  2·N·P·H
/// The full Q×Q square counted, as the paper's algorithm computes it. The MFU numerators add
/// 3× this per Mamba layer (forward + backward), as they add the attention core's.
double ssd_flop_per_token(const MambaSpec& x);
/// Forward FLOPs per token of a Mamba layer's scan: ssd_flop_per_token for mamba2; for mamba1's
/// selective scan, 7 per channel and state (Megatron-LM's mamba_layer_flops scan term,
/// 7·d_in·state_dim: the discretization exp(Δ·A) and Δ·B·x, the recurrence, the C·h readout). It
/// is not a matmul, so the MFU numerators add it as they add the SSD scan (3× per layer).
double mamba_scan_flop_per_token(const MambaSpec& x);

/// Forward FLOPs per token of one chunked gated-delta-rule scan (gated DeltaNet and KDA), in the
/// WY form of Yang et al. 2024 ("Parallelizing Linear Transformers with the Delta Rule over
/// Sequence Length", arXiv 2406.06484 §3; "Gated Delta Networks", arXiv 2412.06464 §3.3) as
/// fla's chunk_gated_delta_rule_fwd / chunk_kda_fwd run it. Per head and chunk of C tokens, key
/// width K, value width V (q and k repeated to the value heads):
///   A = β·K·Kᵀ ([C,K]·[K,C]):                               2·C²·K
///   T = (I + A)⁻¹, the triangular solve (C³/3 multiply-adds): 2·C³/3
///   W = T·(βK), U = T·(βV):                                 2·C²·K + 2·C²·V
///   state pass: V' = U − W·S, S ← S + Kᵀ·V':                 2·2·C·K·V
///   output: Q·S, Q·Kᵀ (masked), (QKᵀ)·V':                   2·C·K·V + 2·C²·K + 2·C²·V
/// Per token (÷ C), times the value heads: H·(2·C·(3K + 2V) + 2·C²/3 + 6·K·V). KDA's per-channel
/// decay only scales these operands (element-wise), so the count is the same. The MFU numerators
/// add 3× this per linear-attention layer, as for attention and Mamba.
double delta_rule_flop_per_token(const LinearAttentionSpec& x);

/// Forward FLOPs per token of one DSA attention layer (SparseAttentionSpec) at sequence length s,
/// counted as the dense formulas count (every query against min(top_k, s) keys, the indexer
/// against all s): the indexer's scores 2·s·index_heads·index_head_dim, and MLA in MQA mode over
/// the selected keys 2·min(k, s)·heads·(kv_lora_rank + rope + kv_lora_rank).
double dsa_flop_per_token(const ModelSpec& m, double s);

/// Mean keys one query attends to in a layer of compress ratio `ratio` at sequence length s: its
/// window (every earlier token up to `window`) plus the compressed entries it sees, of which
/// entry j is visible to query i when j < (i + 1) / ratio: all of them (HCA), or the top_k
/// the indexer picks (CSA: top_k − ratio·top_k²/(2s) once s/ratio > top_k).
double compressed_mean_keys(const CompressedAttentionSpec& c, double s, int ratio);

/// Forward FLOPs per token of a layer's attention core and, on CSA layers, of the indexer's
/// scores over every visible entry, counted as Megatron-Bridge's DeepSeek-V4 formula counts them
/// (flop_utils.py: the window's full `window` keys, the indexer over s/ratio entries).
double compressed_flop_per_token(const ModelSpec& m, double s, int ratio);

/// Keys a query attends to in a causal window of w tokens relative to full causal attention,
/// averaged over a sequence of s: (w − w²/2s) / (s/2) = 2w/s − (w/s)² for w < s, else 1.
double attention_keys_fraction(double window, double seq_len);

}  // namespace clustersim::models
