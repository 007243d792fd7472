#pragma once
// The attention kernels of one multi-head-latent-attention block (DeepSeek-V2/V3, Kimi K2) for
// one micro-batch on one rank — as data for the step builder (the dense block program in
// models/layer_ops.cpp has one attention shape; MLA has five projections and two head widths).
#include "hardware/gpu_spec.hpp"
#include "models/layer_ops.hpp"
#include "models/model_spec.hpp"
#include "models/training_spec.hpp"

namespace clustersim::models {

struct MlaOps {
  PassCost fwd, bwd;
  double attention_flop_fwd = 0;  ///< the core (QKᵀ and A·V) alone
  /// Bytes the attention's backward reads, per block per micro-batch without recompute, beyond
  /// the block input: the two latents before and after their norms (duplicated on every TP
  /// rank), per-head Q, K, V and the core output, the fp32 log-sum-exp. Recomputing the up
  /// projections (Megatron recompute_modules: mla_up_proj) drops Q, K and V to the latents.
  double saved_bytes = 0;
  double saved_bytes_up_proj_recompute = 0;
  double hyper_connection_saved = 0;  ///< of either figure above: the mHC sites' kept streams
};

/// Megatron MLASelfAttention with TP: the down projections (q_a: h → q_lora_rank, kv_a: h →
/// kv_lora_rank + rope) are duplicated on every TP rank (parallel_mode "duplicated"), the up
/// projections (q_b, kv_b) column-parallel over heads, o_proj row-parallel; RMSNorms on the two
/// latents; RoPE on the rope part of q and on the shared rope key; a causal flash core with
/// head widths d_qk = nope + rope and d_v (computing (nb+1)/(2nb) of s², as layer_ops; backward
/// 2.5× the forward). Sliding-window layers are not MLA in any preset and are not handled here.
/// Whether selective recompute reruns the forward op `name` before the backward: under mla_up_proj
/// MLA's up projections, and DeepSeek-V4's q_up with its head norm, the key/value projection with
/// its norm, and RoPE (Megatron-Core dev deepseek_v4_hybrid_attention.py); under mhc the
/// hyper-connection sites' ops.
bool rerun_before_backward(const std::string& name, const TrainingSpec& t);
/// Whether `name` is an MLA, DSA or DeepSeek-V4 block's attention core: what selective recompute
/// of core_attn reruns there.
bool attention_core_op(const std::string& name);

MlaOps mla_attention_ops(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu);

}  // namespace clustersim::models
