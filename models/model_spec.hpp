#pragma once
// Architecture of a decoder-only Transformer, as written in models/presets/*.yaml: dense or
// Mixture-of-Experts, with multi-head or multi-head latent attention (MLA), and hybrid stacks
// whose layers mix Mamba-2 and attention mixers with dense, MoE or no MLPs (layer_pattern).
#include <cstdint>
#include <string>
#include <vector>

#include "models/enum_names.hpp"

namespace clustersim::models {

/// MLP activation. gelu and relu2 (squared ReLU, So et al. 2021 "Primer"; Nemotron-4) are
/// non-gated: up [h, f], down [f, h]. swiglu and geglu (Shazeer 2020) are gated: gate and up
/// [h, f] each, down [f, h].
enum class Activation { gelu, swiglu, relu2, geglu };
/// rope: rotary embeddings. yarn: rotary embeddings with YaRN frequency scaling and its attention
/// scale (GPT-OSS, rope_scaling.rope_type "yarn"): Megatron-Core applies it unfused (TE's fused
/// RoPE takes no scale; Megatron-LM 987395813b), the same parameters and FLOPs as rope.
enum class Position { learned, rope, yarn };
enum class Norm { layernorm, rmsnorm };
inline constexpr NameTable<Activation, 4> kActivationNames{{{Activation::gelu, "gelu"},
                                                            {Activation::swiglu, "swiglu"},
                                                            {Activation::relu2, "relu2"},
                                                            {Activation::geglu, "geglu"}}};
inline constexpr NameTable<Position, 3> kPositionNames{
    {{Position::learned, "learned"}, {Position::rope, "rope"}, {Position::yarn, "yarn"}}};
inline constexpr NameTable<Norm, 2> kNormNames{{{Norm::layernorm, "layernorm"}, {Norm::rmsnorm, "rmsnorm"}}};

inline bool gated(Activation a) { return a == Activation::swiglu || a == Activation::geglu; }

/// Mixture-of-Experts MLP (absent: experts == 0). Routed experts and shared experts have the
/// same width expert_ffn_hidden (DeepSeek-V2/V3 and Llama 4 configs).
struct MoeSpec {
  int experts = 0;             ///< routed experts per MoE layer
  int top_k = 0;               ///< routed experts per token
  int shared_experts = 0;      ///< always-active experts
  int expert_ffn_hidden = 0;   ///< inner width of one expert
  int dense_layers = 0;        ///< leading layers that keep the dense MLP (ffn_hidden)
  int frequency = 1;           ///< after them, every frequency-th layer is MoE
  double capacity_factor = 0;  ///< 0 = dropless
  /// Latent MoE (Nemotron 3 Super, Megatron --moe-latent-size): the routed experts work on a
  /// down-projection of the hidden (h → latent_dim before the dispatch, latent_dim → h after the
  /// combine); shared experts and router stay on h. 0: the experts work on h.
  int latent_dim = 0;
  /// Group-limited routing (DeepSeek-V2 device-limited, V3 node-limited routing; Megatron
  /// --moe-router-num-groups / --moe-router-group-topk, HF n_group / topk_group): the experts in
  /// `router_groups` contiguous groups, and each token's top_k chosen within the
  /// `router_group_top_k` groups that score best. 0: no limit.
  int router_groups = 1;
  int router_group_top_k = 0;
  bool group_limited() const { return router_group_top_k > 0 && router_group_top_k < router_groups; }
  bool enabled() const { return experts > 0; }
  bool operator==(const MoeSpec&) const = default;
};

/// Which Mamba mixer a model's Mamba layers run.
/// - mamba2: Mamba-2 (Dao & Gu 2024, arXiv 2405.21060; Megatron-Core MambaMixer): in_proj h →
///   [z, x, B, C, dt] (2·heads·head_dim + 2·groups·state_dim + heads), a depthwise causal conv1d
///   of conv_kernel taps over x, B and C, the chunked SSD scan (chunks of `chunk` tokens), a gated
///   RMSNorm over groups, out_proj heads·head_dim → h.
/// - mamba1: Mamba-1 (Gu & Dao 2023, arXiv 2312.00752), as Jamba runs it (transformers
///   JambaMambaMixer with mamba_ssm's selective_scan_cuda): in_proj h → [x, z] (2·channels), the
///   depthwise conv1d over x (with bias), x_proj channels → [dt, B, C] (dt_rank + 2·state_dim) with
///   Jamba's RMSNorms on dt, B and C, dt_proj dt_rank → channels (with bias), the selective scan
///   of every channel's own state_dim-wide state (gated by z inside the kernel), out_proj
///   channels → h. channels = expand · h.
enum class MambaKind : std::uint8_t { mamba2, mamba1 };
inline constexpr NameTable<MambaKind, 2> kMambaKindNames{{{MambaKind::mamba2, "mamba2"}, {MambaKind::mamba1, "mamba1"}}};

struct MambaSpec {
  int state_dim = 0;   ///< N (ssm_state_size, mamba_d_state)
  int heads = 0;       ///< mamba2: mamba_num_heads
  int head_dim = 64;   ///< mamba2: P (mamba_head_dim)
  int groups = 1;      ///< mamba2: n_groups: B and C are shared by heads/groups heads
  int conv_kernel = 4;
  int chunk = 128;     ///< mamba2: Q, the SSD chunk length
  MambaKind kind = MambaKind::mamba2;
  int channels = 0;    ///< mamba1: expand · hidden (d_inner)
  int dt_rank = 0;     ///< mamba1: the width of dt before dt_proj
  bool mamba1() const { return kind == MambaKind::mamba1; }
  bool enabled() const { return mamba1() ? channels > 0 : heads > 0; }
  double inner() const { return mamba1() ? double(channels) : double(heads) * head_dim; }
  double conv_dim() const { return mamba1() ? inner() : inner() + 2.0 * groups * state_dim; }
  double in_proj_width() const { return mamba1() ? 2 * inner() : 2 * inner() + 2.0 * groups * state_dim + heads; }
  /// mamba1: x_proj's output, [dt, B, C].
  double x_proj_width() const { return mamba1() ? dt_rank + 2.0 * state_dim : 0.0; }
  /// The mixer's matmul weights: in_proj, out_proj and, for mamba1, x_proj and dt_proj.
  double matmul_params(double hidden) const {
    return hidden * (in_proj_width() + inner()) + (mamba1() ? inner() * x_proj_width() + double(dt_rank) * inner() : 0.0);
  }
  bool operator==(const MambaSpec&) const = default;
};

/// Linear attention with the gated delta rule, in its chunked (WY) form, as flash-linear-attention
/// runs it (fla ops chunk_gated_delta_rule / chunk_kda):
/// - gated_deltanet: Yang, Kautz & Hatamizadeh 2024 "Gated Delta Networks" (arXiv 2412.06464),
///   Qwen3-Next's Qwen3NextGatedDeltaNet: in_proj h → [q, k, v, z] (2·key_dim + 2·value_dim)
///   and [b, a] (2·heads), a causal conv1d over q, k, v (no bias), a scalar decay per head
///   (A_log, dt_bias), a gated RMSNorm (weight value_head_dim), out_proj value_dim → h.
/// - kda: Kimi Delta Attention (Kimi Linear tech report, arXiv 2510.26692), fla KimiDeltaAttention:
///   q, k, v projections and short convs, a per-channel decay from a low-rank f_a/f_b projection
///   (rank value_head_dim) plus dt_bias (key_dim) and A_log (heads), b_proj h → heads, a low-rank
///   output gate g_a/g_b, the gated RMSNorm, o_proj.
enum class LinearKind : std::uint8_t { gated_deltanet, kda };
inline constexpr NameTable<LinearKind, 2> kLinearKindNames{{{LinearKind::gated_deltanet, "gated_deltanet"}, {LinearKind::kda, "kda"}}};
struct LinearAttentionSpec {
  LinearKind kind = LinearKind::gated_deltanet;
  int heads = 0;           ///< value heads (Qwen3-Next linear_num_value_heads; KDA num_heads)
  int key_heads = 0;       ///< key/query heads (linear_num_key_heads); 0: = heads
  int head_dim = 128;      ///< key head width d_k (linear_key_head_dim; KDA head_dim)
  int value_head_dim = 0;  ///< value head width d_v (linear_value_head_dim); 0: = head_dim
  int conv_kernel = 4;     ///< linear_conv_kernel_dim / short_conv_kernel_size
  int chunk = 64;          ///< C, the chunk length of fla's chunked kernels (BT = 64)
  bool enabled() const { return heads > 0; }
  int qk_heads() const { return key_heads > 0 ? key_heads : heads; }
  int v_dim() const { return value_head_dim > 0 ? value_head_dim : head_dim; }
  double key_dim() const { return double(qk_heads()) * head_dim; }
  double value_dim() const { return double(heads) * v_dim(); }
  double conv_dim() const { return 2 * key_dim() + value_dim(); }
  /// Matmul weights of one mixer on hidden width h (projections in and out, low-rank gates).
  double matmul_params(double h) const {
    if (kind == LinearKind::kda)
      return h * (conv_dim() + heads + 2.0 * v_dim()) + v_dim() * (key_dim() + value_dim()) + value_dim() * h;
    return h * (2 * key_dim() + 2 * value_dim() + 2.0 * heads) + value_dim() * h;
  }
  bool operator==(const LinearAttentionSpec&) const = default;
};

/// What one layer of a hybrid stack holds: a sequence mixer (attention, Mamba-2, linear
/// attention or none) and an MLP (dense, MoE or none), each with its own pre-norm and residual. A
/// Transformer layer is {attention, dense or moe}; a Nemotron-H layer has exactly one of the two.
enum class Mixer : std::uint8_t { attention, mamba, none, linear };
enum class MlpKind : std::uint8_t { dense, moe, none };
struct LayerKind {
  Mixer mixer = Mixer::attention;
  MlpKind mlp = MlpKind::dense;
  bool operator==(const LayerKind&) const = default;
};

/// Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434 §2.1; HF DeepseekV3Attention).
struct MlaSpec {
  int q_lora_rank = 0;  ///< 0: queries are not compressed (q_proj h → heads·(nope+rope))
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
  bool enabled() const { return kv_lora_rank > 0; }
  bool operator==(const MlaSpec&) const = default;
};

/// DeepSeek Sparse Attention (DeepSeek-V3.2, DeepSeek-AI 2025 "DeepSeek-V3.2: Pushing the Frontier
/// of Open Large Language Models", §2.1; HF DeepseekV32 config index_n_heads, index_head_dim,
/// index_topk) on MLA: a lightning indexer (wq_b q_lora_rank → index_heads·index_head_dim, wk h
/// → index_head_dim with a LayerNorm, weights_proj h → index_heads; FP8 scores
/// Σ_j w_j·ReLU(q_j·k_s) over every earlier token) selects top_k_tokens keys per query, and the
/// attention (MLA in its MQA mode: the shared latent keys, kv_lora_rank + rope wide, and values,
/// kv_lora_rank wide) runs over those only.
struct SparseAttentionSpec {
  int index_heads = 0;
  int index_head_dim = 128;
  int top_k_tokens = 2048;
  bool enabled() const { return index_heads > 0; }
  bool operator==(const SparseAttentionSpec&) const = default;
};

/// DeepSeek-V4's hybrid attention (HF DeepseekV4 config: compress_ratios, sliding_window,
/// q_lora_rank, o_groups, o_lora_rank, index_*; Megatron-Core dev's deepseek_v4_hybrid_attention
/// and csa.py; Automodel's deepseek_v4/layers.py; sources and what is assumed in
/// docs/reference/deepseek_v4.md). Multi-query attention with one 512-wide head that is both key
/// and value, low-rank queries (h → q_lora_rank → heads·head_dim) and a grouped low-rank output
/// (o_groups × [heads·head_dim/o_groups → o_lora_rank], then o_groups·o_lora_rank → h). Every
/// layer attends to a sliding window of `window` raw tokens; a layer with ratio r > 0 also
/// attends to compressed entries, each a softmax-gated pool of r tokens:
/// - r == index_ratio (CSA): pools overlap (2r tokens, wkv and wgate twice as wide), and a
///   lightning indexer (its own compressor, index_heads × index_head_dim) picks top_k entries;
/// - any other r (HCA): every causally visible entry.
/// The kinds of layer compressed attention has, by ratio: window only (0), CSA (index_ratio),
/// HCA (any other).
enum class CompressedKind : std::uint8_t { window, csa, hca };
inline constexpr std::size_t kCompressedKinds = 3;

struct CompressedAttentionSpec {
  std::vector<int> ratios;  ///< per layer of the main stack, then per MTP module (0: window only)
  int window = 128;
  int q_lora_rank = 0;
  int o_groups = 1;
  int o_lora_rank = 0;
  int rope_dim = 64;  ///< the rotated slice of each head (qk_rope_head_dim)
  int index_ratio = 4;
  int index_heads = 0;
  int index_head_dim = 128;
  int top_k = 512;
  bool enabled() const { return !ratios.empty(); }
  /// Layer i's ratio (MTP modules past the list: 0, as Megatron-Bridge appends for them).
  int ratio(int i) const { return i < int(ratios.size()) ? ratios[static_cast<std::size_t>(i)] : 0; }
  bool indexed(int ratio) const { return ratio > 0 && ratio == index_ratio; }
  CompressedKind kind_of(int layer) const {
    const int r = ratio(layer);
    return r == 0 ? CompressedKind::window : indexed(r) ? CompressedKind::csa : CompressedKind::hca;
  }
  bool operator==(const CompressedAttentionSpec&) const = default;
};

/// Manifold-constrained hyper-connections (DeepSeek-V4, HF hc_mult / hc_sinkhorn_iters): the
/// residual is `streams` copies of the hidden; before each sublayer a fp32 mapping (RMS over all
/// streams, a [streams·h → (2 + streams)·streams] projection, a Sinkhorn-normalised
/// streams × streams mix) collapses them into the sublayer's input and spreads its output back.
struct HyperConnections {
  int streams = 0;
  int sinkhorn_iters = 20;
  bool enabled() const { return streams > 1; }
  bool operator==(const HyperConnections&) const = default;
};

/// Every `every`-th layer (the every-th, 2·every-th, ...) attends to a window of `tokens`.
struct SlidingWindow {
  int tokens = 0;
  int every = 1;
  bool enabled() const { return tokens > 0; }
  bool operator==(const SlidingWindow&) const = default;
};

struct ModelSpec {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;      ///< key/value heads (GQA); equals heads for multi-head attention
  int ffn_hidden = 0;    ///< MLP inner width of a dense layer (gate/up width when gated)
  int vocab = 0;
  Activation activation = Activation::gelu;
  bool tied_embeddings = false;
  Position position = Position::learned;
  int head_size = 0;     ///< per-head width when set (Gemma, Qwen3, GPT-OSS); 0 = hidden / heads
  Norm norm = Norm::layernorm;
  bool bias = false;      ///< biases on every linear layer (GPT-2/3, GPT-OSS), the router included
  bool qkv_bias = false;  ///< bias on the QKV projection only (Qwen2); implied by bias
  double dropout = 0;     ///< hidden and attention dropout probability (0: no masks, no kernels)
  /// The gated experts' inputs clamped before the activation (GPT-OSS swiglu_limit 7: gate at
  /// most, linear part within ±); 0 = none. Costs passes, no parameters or FLOPs (moe_ops.cpp).
  double activation_clamp = 0;
  MoeSpec moe;
  MlaSpec mla;
  SlidingWindow sliding_window;
  int mtp_layers = 0;     ///< DeepSeek-V3 multi-token-prediction modules
  MambaSpec mamba;
  LinearAttentionSpec linear_attention;
  SparseAttentionSpec sparse_attention;
  CompressedAttentionSpec compressed_attention;
  HyperConnections hyper_connections;
  /// Per layer (size == layers) when the stack is hybrid; empty: every layer is attention +
  /// (dense or MoE by `moe`). MTP modules (layer ≥ layers) are attention + MoE/dense as before.
  std::vector<LayerKind> layer_pattern;

  int head_dim() const { return head_size > 0 ? head_size : hidden / heads; }
  /// Query/key and value widths per head (MLA: nope + rope and v_head_dim).
  int qk_head_dim() const { return mla.enabled() ? mla.qk_nope_head_dim + mla.qk_rope_head_dim : head_dim(); }
  int v_head_dim() const { return mla.enabled() ? mla.v_head_dim : head_dim(); }
  /// Vocabulary as Megatron allocates it: padded up to a multiple of 128·tp
  /// (--make-vocab-size-divisible-by 128, times the TP size) so each TP rank gets equal rows.
  int padded_vocab(int tp) const {
    const int multiple = 128 * tp;
    return (vocab + multiple - 1) / multiple * multiple;
  }
  bool has_qkv_bias() const { return bias || qkv_bias; }
  bool is_moe() const { return moe.enabled(); }
  /// Layer i (0-based) of the main stack has an MoE MLP: after moe.dense_layers, the
  /// frequency-th, 2·frequency-th, ... layer (HF Llama 4 interleave_moe_layer_step puts MoE on
  /// layers step−1, 2·step−1, ...; DeepSeek first_k_dense_replace + moe_layer_freq 1).
  bool moe_layer(int i) const {
    if (!moe.enabled()) return false;
    if (hybrid() && i < layers) return layer_pattern[static_cast<std::size_t>(i)].mlp == MlpKind::moe;
    if (i < moe.dense_layers) return false;
    return (i - moe.dense_layers) % moe.frequency == moe.frequency - 1;
  }
  /// Layer i attends to a sliding window (the every-th, 2·every-th, ... layer).
  bool sliding_layer(int i) const {
    return sliding_window.enabled() && i % sliding_window.every == sliding_window.every - 1;
  }
  int moe_layer_count() const;
  int sliding_layer_count() const;
  bool hybrid() const { return !layer_pattern.empty(); }
  /// Layer i's mixer and MLP (MTP modules, i ≥ layers: attention + the MoE rule).
  LayerKind layer_kind(int i) const {
    if (hybrid() && i < layers) return layer_pattern[static_cast<std::size_t>(i)];
    return {Mixer::attention, moe_layer(i) ? MlpKind::moe : MlpKind::dense};
  }
  int mixer_count(Mixer x) const;  ///< layers of the main stack with mixer x
  /// Width the routed experts work on: moe.latent_dim, else hidden.
  int expert_width() const { return moe.latent_dim > 0 ? moe.latent_dim : hidden; }
  bool operator==(const ModelSpec&) const = default;
};

/// Parameter counts (embeddings included; learned position table sized for `seq_len`). The
/// main stack only: MTP modules are reported apart (DeepSeek-V3's 671B excludes its 14B MTP).
struct ParamCount {
  double per_layer = 0;       ///< one Transformer block; the mean over blocks for MoE models
  double embedding = 0;       ///< token (+ learned position) embedding
  double lm_head = 0;         ///< separate output projection (0 when tied)
  double final_norm = 0;
  double total = 0;
  double non_embedding = 0;   ///< total − token/position embedding − untied head
  double matmul = 0;          ///< weights used in matrix multiplies, LM head included
  // Mixture-of-Experts breakdown (dense models: active == total, experts == 0).
  double attention = 0;       ///< one block's attention (projections, biases, MLA norms)
  double dense_layer = 0;     ///< one block with a dense MLP
  double moe_layer = 0;       ///< one block with an MoE MLP, every expert counted
  double expert = 0;          ///< one routed (or shared) expert
  double experts = 0;         ///< all routed experts of the stack (what EP shards)
  double active = 0;          ///< parameters one token uses: top_k + shared experts per MoE layer
  double active_matmul = 0;   ///< matmul weights one token uses, LM head included
  double mtp = 0;             ///< MTP modules (projection + block + norms; embedding/head shared)
  double mtp_active_matmul = 0;
};

ParamCount count_params(const ModelSpec& m, int seq_len);

/// Parameters of layer i outside its routed experts (mixer, norms, dense MLP or router, shared
/// experts and latent projections), whole (before TP).
double layer_dense_params(const ModelSpec& m, int layer);
/// One Mamba-2 mixer: in_proj, conv1d (weights and bias), dt_bias, A_log, D, the gated norm's
/// weight, out_proj (Megatron MambaMixer; no linear biases).
double mamba_params(const ModelSpec& m);
/// One linear-attention mixer (model.linear_attention): its matmul weights, the depthwise conv
/// taps (no bias), the decay parameters (gated_deltanet: A_log and dt_bias per head; kda: A_log
/// per head, dt_bias per key channel) and the gated norm's weight.
double linear_attention_params(const ModelSpec& m);

/// Per-layer pieces of count_params, for the kernel program and the memory model.
double attention_params(const ModelSpec& m);
double mlp_params(const ModelSpec& m, double ffn);  ///< one MLP (or shared expert) of inner width ffn
double expert_params(const ModelSpec& m);           ///< one routed expert (on expert_width())
double norm_params(const ModelSpec& m, double width);

}  // namespace clustersim::models
