#include "models/memory.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "models/compressed_attention_ops.hpp"
#include "models/detail/memory_wgrad.hpp"
#include "models/detail/moe_memory.hpp"
#include "models/linear_attention_ops.hpp"
#include "models/mamba_ops.hpp"
#include "models/mla_ops.hpp"
#include "models/pipeline.hpp"

namespace clustersim::models {

namespace {

// Bytes per logit at the loss: the logits in the activation dtype, plus the FP32 copy the
// softmax runs on unless the cross-entropy is fused (TrainingSpec::cross_entropy; a fused
// kernel's per-row log-sum-exp is left out).
double logit_bytes(const TrainingSpec& t) {
  return hardware::storage_bytes(t.precision) + (t.cross_entropy == CrossEntropy::fp32 ? 4.0 : 0.0);
}

// A recompute module in effect: listed, and recompute still selective (a what-if that turns
// recompute off keeps the list).
bool reruns(const TrainingSpec& t, RecomputeModule m) { return t.recompute == Recompute::selective && t.recomputes(m); }

// Bytes one block saves for backward, per micro-batch, with no recompute.
double block_activation_bytes(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                              bool keep_attention_core) {
  const double s = double(t.seq_len) / p.cp, b = t.micro_batch, e = hardware::storage_bytes(t.precision);
  const double tokens = s * b, h = m.hidden, d = m.head_dim();
  const double q = double(m.heads) / p.tp, kv = std::max(1.0, double(m.kv_heads) / p.tp);
  const double f = double(m.ffn_hidden) / p.tp;
  // Norm inputs, GEMM inputs of the column-parallel layers and dropout masks are whole
  // [s, b, h] tensors on every TP rank, unless sequence parallelism shards them.
  const double sp = p.sequence_parallel ? p.tp : 1.0;
  const double act = tokens * h * e / sp;
  // A linear's input as it keeps it for the wgrad GEMM: in FP8/MXFP8 Transformer Engine keeps the
  // quantized copy (Megatron-Core experts.py calls TE's set_save_original_input only to opt out
  // under moe_act recompute); torchao keeps BF16 (TrainingSpec::fp8_saves_quantized_inputs).
  const double in = t.saved_linear_input_bytes();
  const double act_in = tokens * h * in / sp;
  double bytes = 0;
  bytes += act;                                  // norm1 input
  bytes += act_in;                               // QKV GEMM input
  bytes += tokens * (q + 2 * kv) * d * e;        // Q, K, V
  // The output projection's quantized input, beside the BF16 attention output the core keeps.
  if (in != e) bytes += tokens * q * d * in;
  if (keep_attention_core) {
    if (t.flash_attention) {
      bytes += tokens * q * d * e;               // attention output (attn_out input)
      bytes += 4.0 * b * q * s;                  // softmax log-sum-exp, fp32
    } else {
      bytes += tokens * q * d * e;
      bytes += 2.0 * b * q * s * s * e;          // scores and softmax output
      if (m.dropout > 0) bytes += b * q * s * s;  // attention dropout mask
    }
  }
  bytes += act;                                  // norm2 input (residual)
  bytes += act_in;                               // MLP input
  bytes += tokens * fc1_output_saved_bytes(m, t, f);  // gate/up output
  bytes += tokens * f * in;                      // activation output (down-proj input)
  if (m.dropout > 0) bytes += 2 * tokens * h / sp;  // two hidden dropout masks, 1 B each
  return bytes;
}

// The dense MLP's share of block_activation_bytes: its norm input, the up projection's input,
// the gate/up output and the activation output.
double dense_mlp_activation_bytes(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p) {
  const double tokens = double(t.seq_len) / p.cp * t.micro_batch, e = hardware::storage_bytes(t.precision);
  const double sp = p.sequence_parallel ? p.tp : 1.0, f = double(m.ffn_hidden) / p.tp, in = t.saved_linear_input_bytes();
  return tokens * m.hidden * (e + in) / sp + tokens * fc1_output_saved_bytes(m, t, f) + tokens * f * in;
}

// An MoE / MLA model layer by layer: what its dense part holds (÷ tp) and what one block saves
// for backward per micro-batch — the dense block's bytes with the MLP replaced by the routed and
// shared experts' (models/moe_memory.cpp) and the attention by MLA's (models/mla_ops.cpp).
struct LayerMemory {
  double dense_params = 0, activations = 0;
};

// What one recurrent mixer saves for backward per micro-batch beyond the block input
// (mamba_mixer_ops, linear_attention_ops).
struct MixerSaved {
  double mamba = 0, linear = 0;
};

// `pc` is count_params(m, t.seq_len); `mla_saved` what one MLA attention saves for backward
// (mla_attention_ops: its saved bytes under the recompute in effect). Both are the same for
// every layer, so the caller computes them once per plan.
LayerMemory layer_memory(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const ParamCount& pc,
                         double mla_saved, MixerSaved saved, int layer, bool keep_core, const MoeMemory& mm) {
  const bool moe = m.moe_layer(layer);
  LayerMemory r;
  r.dense_params = (moe ? pc.moe_layer - double(m.moe.experts) * pc.expert : m.is_moe() ? pc.dense_layer : pc.per_layer) / p.tp;
  if (m.hybrid() || m.compressed_attention.enabled()) r.dense_params = layer_dense_params(m, layer) / p.tp;
  r.activations = block_activation_bytes(m, t, p, keep_core);
  const LayerKind kind = m.layer_kind(layer);
  if (m.hybrid()) {  // the sub-blocks the layer has: its mixer's bytes, its MLP's (MoE: below)
    const double mlp_bytes = dense_mlp_activation_bytes(m, t, p);
    const double norm_input = double(t.seq_len) / p.cp * t.micro_batch * m.hidden * hardware::storage_bytes(t.precision) /
                              (p.sequence_parallel ? p.tp : 1.0);
    const double mixer_bytes = kind.mixer == Mixer::attention ? r.activations - mlp_bytes
                               : kind.mixer == Mixer::mamba   ? norm_input + saved.mamba
                               : kind.mixer == Mixer::linear  ? norm_input + saved.linear
                                                              : 0.0;
    r.activations = mixer_bytes + (kind.mlp == MlpKind::none ? 0.0 : mlp_bytes);
  }
  const double tokens = double(t.seq_len) / p.cp * t.micro_batch, e = hardware::storage_bytes(t.precision);
  if (moe) {
    const double f = double(m.ffn_hidden) / p.tp, in = t.saved_linear_input_bytes();
    const double sp = p.sequence_parallel ? p.tp : 1.0;
    // The dense MLP's gate/up and activation outputs go; the MLP input is the router's, kept in
    // BF16 (the router GEMM is not a low-precision linear; the shared experts' quantized copy is
    // in moe_memory).
    r.activations -= tokens * (fc1_output_saved_bytes(m, t, f) + f * in);
    r.activations += tokens * m.hidden * (e - in) / sp;
    r.activations += mm.routed_activation_bytes;
  }
  if ((m.mla.enabled() || m.compressed_attention.enabled()) && kind.mixer == Mixer::attention) {
    const double q = double(m.heads) / p.tp, kv = std::max(1.0, double(m.kv_heads) / p.tp), d = m.head_dim();
    r.activations -= tokens * (q + 2 * kv) * d * e + (keep_core ? tokens * q * d * e + 4.0 * q * tokens : 0.0);
    // The output projection's quantized input is heads·v_head_dim wide under MLA, not heads·head_dim;
    // DeepSeek-V4's wo_a runs in BF16 on the kept core output (its saved bytes hold wo_b's input).
    const double in = t.saved_linear_input_bytes(), v = m.compressed_attention.enabled() ? 0.0 : m.mla.v_head_dim;
    if (in != e) r.activations += tokens * q * (v - d) * in;
    r.activations += mla_saved;
  }
  return r;
}

// The mean over stage s's blocks (its MTP modules' too) of what each keeps from B to W.
double stage_kept_for_w(const ModelSpec& m, const ParallelSpec& p, const std::optional<WgradKept>& kept,
                        const std::vector<int>& vlayers, int s) {
  double sum = 0;
  int n = 0;
  for (int c = 0; c < p.vpp; ++c) {
    const int vs = c * p.pp + s;
    int first = 0;
    for (int v = 0; v < vs; ++v) first += vlayers[std::size_t(v)];
    for (int l = 0; l < vlayers[std::size_t(vs)]; ++l, ++n) sum += kept->bytes(first + l);
    if (vs == p.pp * p.vpp - 1)
      for (int j = 0; j < m.mtp_layers; ++j, ++n) sum += kept->bytes(m.layers + j);
  }
  return n ? sum / n : 0.0;
}

// Per block from its forward to its backward (the stage's mean block); with full recompute only
// block inputs are kept, and one block's activations are rebuilt at a time in backward. With
// recompute_layers only the first blocks of each chunk are recomputed and the others keep
// everything (`partial`: exact for the peak, which holds whole chunk passes, when the stage's
// chunks are alike).
double saved_per_block(const TrainingSpec& t, double full, double selective, double partial, double layer_input) {
  if (t.recompute == Recompute::none) return full;
  if (t.recompute == Recompute::selective) return selective;
  return t.recompute_layers < 0 ? layer_input : partial;
}

}  // namespace

namespace {

// What one block of each kind saves, by the training it runs (layer_memory).
struct BlockInputs {
  MoeMemory per_moe_layer;
  double mla_saved = 0;    // what one MLA attention saves for backward
  std::array<double, kCompressedKinds> v4_saved{};  // DeepSeek-V4: what each kind's attention saves
  double attention_saved(const ModelSpec& m, int layer) const {
    if (!m.compressed_attention.enabled()) return mla_saved;
    return v4_saved[static_cast<std::size_t>(m.compressed_attention.kind_of(layer))];
  }
  MixerSaved mixer_saved;  // what one Mamba-2 / linear-attention mixer saves for backward
};

BlockInputs block_inputs(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                         const hardware::GpuSpec& gpu) {
  BlockInputs b;
  if (m.mamba.enabled()) b.mixer_saved.mamba = mamba_mixer_ops(m, t, p, gpu).saved_bytes;
  if (m.linear_attention.enabled()) b.mixer_saved.linear = linear_attention_ops(m, t, p, gpu).saved_bytes;
  if (m.is_moe()) {
    const MoeLayerOps ops = moe_layer_ops(m, t, p, expert_parallel(p), gpu, t.moe_load_imbalance);
    b.per_moe_layer = moe_memory(m, t, p, expert_parallel(p), 1, ops);
    const double width = double(m.moe.expert_ffn_hidden) / p.etp, e = hardware::storage_bytes(t.precision);
    if (reruns(t, RecomputeModule::moe))  // the whole MoE MLP is rerun: only its input stays
      b.per_moe_layer.routed_activation_bytes = ops.tokens * m.hidden * e;
    else if (reruns(t, RecomputeModule::moe_act))  // the experts' activation output (fc2 input) is rerun
      b.per_moe_layer.routed_activation_bytes -= ops.routed_tokens * width * t.saved_linear_input_bytes();
  }
  if (m.mla.enabled()) {  // the op list is costed GEMM by GEMM: once per plan, not per layer
    const MlaOps mla = mla_attention_ops(m, t, p, gpu);
    b.mla_saved = reruns(t, RecomputeModule::mla_up_proj) ? mla.saved_bytes_up_proj_recompute : mla.saved_bytes;
  }
  if (m.compressed_attention.enabled()) {
    const CompressedAttentionKinds v4 = compressed_attention_kinds(m, t, p, gpu);
    const bool up = reruns(t, RecomputeModule::mla_up_proj), mhc = reruns(t, RecomputeModule::mhc);
    for (std::size_t i = 0; i < kCompressedKinds; ++i) {
      const MlaOps& k = v4.ops[i];
      b.v4_saved[i] = (up ? k.saved_bytes_up_proj_recompute : k.saved_bytes) - (mhc ? k.hyper_connection_saved : 0.0);
    }
  }
  return b;
}

// What every stage's estimate shares: byte widths, sharding and the per-block figures.
struct StageInputs {
  double h = 0, v = 0, tp = 0, block = 0, embedding = 0, head = 0;
  double wb = 0, gb = 0, ob = 0, shard = 0;
  int zero = 0;
  bool grads_sharded = false, fsdp_params = false, by_layer = false, fp32_state = true;
  std::vector<int> vlayers;
  int vstages = 0, mbs = 0;
  double full = 0, tokens = 0, layer_input = 0;
  std::optional<WgradKept> wgrad_kept;
  ParamCount params;
  BlockInputs blocks;  // the training precision's blocks
  // training.bf16_layers: the BF16 blocks' training (TrainingSpec::bf16_block) and figures;
  // training.module_precision mtp: the MTP modules' (TrainingSpec::for_module).
  std::optional<std::pair<TrainingSpec, BlockInputs>> bf16, mtp;
};

// The training and per-block figures of block `layer` (training.bf16_layers; MTP modules, at
// layer >= m.layers, under training.module_precision).
std::pair<const TrainingSpec*, const BlockInputs*> block_of(const ModelSpec& m, const TrainingSpec& t,
                                                            const StageInputs& in, int layer) {
  if (in.mtp && layer >= m.layers) return {&in.mtp->first, &in.mtp->second};
  if (in.bf16 && t.layer_in_bf16(layer, m.layers)) return {&in.bf16->first, &in.bf16->second};
  return {&t, &in.blocks};
}

StageInputs stage_inputs(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                         const hardware::GpuSpec& gpu) {
  StageInputs in;
  in.params = count_params(m, t.seq_len);
  const ParamCount& pc = in.params;
  in.h = m.hidden, in.v = m.padded_vocab(p.tp), in.tp = p.tp;
  const double h = in.h, v = in.v, tp = in.tp;
  in.block = pc.per_layer / tp;
  in.embedding = (v * h + (pc.embedding - double(m.vocab) * h)) / tp;
  in.head = (m.tied_embeddings && p.pp == 1 ? 0.0 : v * h / tp) + pc.final_norm;
  const bool fp32_weights = t.precision == hardware::Precision::fp32 || t.precision == hardware::Precision::tf32;
  in.wb = fp32_weights ? 4.0 : 2.0;
  // Without an fp32 master the gradient is kept in the parameters' dtype (FSDP2 casts the reduced
  // fp32 gradient back to it); the reduction's own dtype still sets its traffic.
  in.gb = fp32_weights ? 4.0 : (t.grad_reduce_fp32 && t.fp32_optimizer_state) ? 4.0 : 2.0;
  in.ob = t.optimizer_bytes_per_param(fp32_weights);
  in.shard = double(p.dp) * p.cp;
  in.zero = in.shard > 1 ? p.zero_stage : 0;
  // What is sharded at the step's peak. With pipeline parallelism, ZeRO-2/3 accumulate
  // unsharded gradients until the last micro-batch (PyTorch pipelining with FSDP; see
  // models/step.cpp); ZeRO-3 that keeps gathered parameters holds them all.
  in.grads_sharded = in.zero >= 2 && p.reduces_grads_every_micro_batch();
  // PyTorch FSDP (ZeRO-3 here) keeps each parameter as its fp32 shard, which is also the
  // optimizer's master copy (MixedPrecisionPolicy casts to BF16 only in the all-gather): the only
  // 2-byte weights are the units gathered at a time, whatever the shard size.
  in.fsdp_params = p.zero_stage >= 3 && !p.keeps_gathered_params();
  in.fp32_state = t.fp32_optimizer_state || fp32_weights;
  in.vlayers = virtual_stage_layers(m.layers, p);
  in.vstages = p.pp * p.vpp;
  in.mbs = t.micro_batches(p);
  in.full = block_activation_bytes(m, t, p, true);
  in.tokens = double(t.seq_len) / p.cp * t.micro_batch;
  const double sp = p.sequence_parallel ? tp : 1.0;
  in.layer_input = in.tokens * h * hardware::storage_bytes(t.precision) / sp;
  // MoE / MLA models: layer by layer, the routed experts apart (sharded by EP, ETP and ZeRO over
  // the expert-data-parallel group).
  // (BF16 blocks among low-precision ones, training.bf16_layers: layer by layer too.)
  in.by_layer = m.is_moe() || m.mla.enabled() || m.hybrid() || t.has_bf16_blocks() || m.compressed_attention.enabled();
  in.blocks = block_inputs(m, t, p, gpu);
  if (t.has_bf16_blocks()) {
    const TrainingSpec b = t.bf16_block();
    in.bf16.emplace(b, block_inputs(m, b, p, gpu));
  }
  if (m.mtp_layers > 0 && t.overrides(QuantModule::mtp)) {
    const TrainingSpec b = t.for_module(QuantModule::mtp);
    in.mtp.emplace(b, block_inputs(m, b, p, gpu));
  }
  if (p.splits_backward()) in.wgrad_kept.emplace(m, t, p, gpu);
  return in;
}

// One stage's parameters and per-block activations, summed over its chunks (layer by layer for
// MoE / MLA models).
struct StageSums {
  double params = 0, act_full = 0, act_selective = 0, act_partial = 0, block_sum = 0;
  int moe_layers = 0, counted = 0, blocks = 0, rerun = 0;
  bool first = false, last = false;
};

StageSums stage_sums(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const StageInputs& in,
                     int s) {
  StageSums x;
  const auto& vlayers = in.vlayers;
  for (int c = 0; c < p.vpp; ++c) {
    const int vs = c * p.pp + s;
    int layer = 0;
    for (int v = 0; v < vs; ++v) layer += vlayers[std::size_t(v)];
    const int n = vlayers[std::size_t(vs)] + (in.by_layer && vs == in.vstages - 1 ? m.mtp_layers : 0);
    for (int l = 0; in.by_layer && l < n; ++l, ++x.counted) {
      const int i = l < vlayers[std::size_t(vs)] ? layer + l : m.layers + (l - vlayers[std::size_t(vs)]);
      const auto [lt, bi] = block_of(m, t, in, i);
      const LayerMemory lm =
          layer_memory(m, *lt, p, in.params, bi->attention_saved(m, i), bi->mixer_saved, i, true, bi->per_moe_layer);
      x.params += lm.dense_params, x.block_sum += lm.dense_params, x.act_full += lm.activations;
      x.moe_layers += m.moe_layer(i) ? 1 : 0;
      x.act_selective +=
          layer_memory(m, *lt, p, in.params, bi->attention_saved(m, i), bi->mixer_saved, i, false, bi->per_moe_layer)
              .activations;
      x.act_partial += t.recomputes_block(l) ? in.layer_input : lm.activations;
    }
    x.blocks += vlayers[std::size_t(vs)], x.rerun += t.recomputed_blocks(vlayers[std::size_t(vs)]);
    if (!in.by_layer) x.params += vlayers[std::size_t(vs)] * in.block;
    if (vs == 0) x.params += in.embedding, x.first = true;
    if (vs == in.vstages - 1) x.params += in.head, x.last = true;
  }
  return x;
}

// Activations stage `s` holds at its peak.
double stage_activations(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const StageInputs& in,
                         const StageSums& x, int s, MemoryEstimate* e) {
  const int in_flight = peak_layers_in_flight(p, s, in.mbs, in.vlayers);
  e->layers_in_flight = in_flight;
  const double full_s = x.counted ? x.act_full / x.counted : in.full;  // MoE / MLA: the stage's mean block
  const bool partial = t.recompute == Recompute::full && t.recompute_layers >= 0;
  const double selective_s = x.counted ? x.act_selective / x.counted : block_activation_bytes(m, t, p, false);
  const double partial_s =
      x.counted ? x.act_partial / x.counted : full_s - double(x.rerun) / x.blocks * (full_s - in.layer_input);
  const double saved = saved_per_block(t, full_s, selective_s, partial_s, in.layer_input);
  double act = 0;
  if (p.splits_backward()) {
    // B frees what only it read; the wgrad GEMMs' X and dY stay until the block's W pass.
    const double kept = stage_kept_for_w(m, p, in.wgrad_kept, in.vlayers, s);
    act = peak_held_activations(p, s, in.mbs, in.vlayers, saved, kept);
    e->block_saved_bytes = saved, e->block_kept_for_w_bytes = kept;
  } else if (t.activation_offload_layers > 0) {
    // Offloaded blocks leave HBM once copied; the copy of one is in flight at a time [E]
    // (Transformer Engine's offload handler syncs a block's copy before the next one's forward).
    const int resident = in_flight - t.activation_offload_layers + 1;
    act = std::min(in_flight, resident) * saved;
    e->block_saved_bytes = saved;
  } else {
    act = in_flight * saved;
  }
  // One recomputed block is rebuilt at a time in backward. An upper bound with recompute_layers:
  // when the stage's last block is not recomputed, the blocks freed before the first rebuild
  // already make room for it (the peak is then one block lower).
  if (t.recompute == Recompute::full && (!partial || x.rerun > 0)) act += full_s;
  return act;
}

}  // namespace

std::vector<MemoryEstimate> estimate_memory_per_stage(const ModelSpec& m, const TrainingSpec& t,
                                                      const ParallelSpec& p, const hardware::GpuSpec& gpu) {
  const StageInputs in = stage_inputs(m, t, p, gpu);
  std::vector<MemoryEstimate> out;
  for (int s = 0; s < p.pp; ++s) {
    const StageSums x = stage_sums(m, t, p, in, s);
    MemoryEstimate e;
    e.stage = s;
    const double unit = x.counted ? x.block_sum / x.counted : in.block;  // a gathered block
    // FSDP's shard is the fp32 master inside the optimizer bytes, or, without one, the BF16 parameter.
    const double shard_wb = in.fsdp_params && !in.fp32_state ? in.wb / in.shard : 0.0;
    e.weights_bytes = in.fsdp_params ? 2 * unit * in.wb + x.params * shard_wb : x.params * in.wb;
    e.gradients_bytes = x.params * in.gb / (in.grads_sharded ? in.shard : 1.0) + (in.grads_sharded ? 2 * unit * in.gb : 0.0);
    e.optimizer_bytes = x.params * in.ob / (in.zero >= 1 ? in.shard : 1.0);
    e.activations_bytes = stage_activations(m, t, p, in, x, s, &e);
    if (x.moe_layers > 0) {
      e.weights_bytes += x.moe_layers * in.blocks.per_moe_layer.expert_weights_bytes;
      e.gradients_bytes += x.moe_layers * in.blocks.per_moe_layer.expert_gradients_bytes;
      e.optimizer_bytes += x.moe_layers * in.blocks.per_moe_layer.expert_optimizer_bytes;
      e.activations_bytes += in.blocks.per_moe_layer.dispatch_buffer_bytes;  // one layer's buffers at a time
      e.weights_bytes += in.blocks.per_moe_layer.gathered_weight_bytes;      // the two layers gathered at a time
      e.gradients_bytes += in.blocks.per_moe_layer.gathered_gradient_bytes;
    }
    if (x.first || x.last) e.activations_bytes += in.layer_input;  // embedding output / final norm input
    if (x.last) e.logits_bytes = in.tokens * in.v / in.tp * logit_bytes(t);
    e.reserved_bytes = gpu.runtime_reserved.si();
    e.total_bytes = e.weights_bytes + e.gradients_bytes + e.optimizer_bytes + e.activations_bytes +
                    e.logits_bytes + e.reserved_bytes;
    e.capacity_bytes = gpu.hbm_capacity.si();
    out.push_back(e);
  }
  return out;
}

MemoryEstimate largest_stage(const std::vector<MemoryEstimate>& stages) {
  std::size_t pick = 0;
  for (std::size_t s = 1; s < stages.size(); ++s)
    if (stages[s].total_bytes > stages[pick].total_bytes) pick = s;
  return stages.empty() ? MemoryEstimate{} : stages[pick];
}

MemoryEstimate estimate_memory(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                               const hardware::GpuSpec& gpu) {
  return largest_stage(estimate_memory_per_stage(m, t, p, gpu));
}

}  // namespace clustersim::models
