#include "models/memory.hpp"

#include <algorithm>

#include "models/pipeline.hpp"

namespace clustersim::models {

namespace {

// Bytes one block saves for backward, per micro-batch, with no recompute.
double block_activation_bytes(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                              bool keep_attention_core) {
  const double s = double(t.seq_len) / p.cp, b = t.micro_batch, e = hardware::storage_bytes(t.precision);
  const double tokens = s * b, h = m.hidden, d = m.head_dim();
  const double q = double(m.heads) / p.tp, kv = std::max(1.0, double(m.kv_heads) / p.tp);
  const double f = double(m.ffn_hidden) / p.tp;
  const bool is_gated = gated(m.activation);
  // Norm inputs, GEMM inputs of the column-parallel layers and dropout masks are whole
  // [s, b, h] tensors on every TP rank, unless sequence parallelism shards them.
  const double sp = p.sequence_parallel ? p.tp : 1.0;
  const double act = tokens * h * e / sp;
  double bytes = 0;
  bytes += act;                                  // norm1 input
  bytes += act;                                  // QKV GEMM input
  bytes += tokens * (q + 2 * kv) * d * e;        // Q, K, V
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
  bytes += act;                                  // MLP input
  bytes += tokens * (is_gated ? 2 * f : f) * e;  // gate/up output
  bytes += tokens * f * e;                       // activation output (down-proj input)
  if (m.dropout > 0) bytes += 2 * tokens * h / sp;  // two hidden dropout masks, 1 B each
  return bytes;
}

}  // namespace

std::vector<MemoryEstimate> estimate_memory_per_stage(const ModelSpec& m, const TrainingSpec& t,
                                                      const ParallelSpec& p, const hardware::GpuSpec& gpu) {
  const ParamCount pc = count_params(m, t.seq_len);
  const double h = m.hidden, v = m.padded_vocab(p.tp), tp = p.tp;
  const double block = pc.per_layer / tp;
  const double embedding = (v * h + (pc.embedding - double(m.vocab) * h)) / tp;
  const double head = (m.tied_embeddings && p.pp == 1 ? 0.0 : v * h / tp) + pc.final_norm;
  const bool fp32_weights = t.precision == hardware::Precision::fp32 || t.precision == hardware::Precision::tf32;
  const double wb = fp32_weights ? 4.0 : 2.0;
  const double gb = (t.grad_reduce_fp32 || fp32_weights) ? 4.0 : 2.0;
  const double ob = fp32_weights ? 8.0 : 12.0;
  const double shard = double(p.dp) * p.cp;
  const int zero = shard > 1 ? p.zero_stage : 0;
  // What is sharded at the step's peak. With pipeline parallelism, ZeRO-2/3 accumulate
  // unsharded gradients until the last micro-batch (PyTorch pipelining with FSDP; see
  // models/step.cpp); ZeRO-3 that keeps gathered parameters holds them all.
  const bool grads_sharded = zero >= 2 && p.reduces_grads_every_micro_batch();
  const bool weights_sharded = zero >= 3 && !p.keeps_gathered_params();
  const auto vlayers = virtual_stage_layers(m.layers, p);
  const int vstages = p.pp * p.vpp;
  const int mbs = t.micro_batches(p);
  const double full = block_activation_bytes(m, t, p, true);
  const double tokens = double(t.seq_len) / p.cp * t.micro_batch;
  const double sp = p.sequence_parallel ? tp : 1.0;
  const double layer_input = tokens * h * hardware::storage_bytes(t.precision) / sp;

  std::vector<MemoryEstimate> out;
  for (int s = 0; s < p.pp; ++s) {
    double params = 0;
    bool first = false, last = false;
    for (int c = 0; c < p.vpp; ++c) {
      const int vs = c * p.pp + s;
      params += vlayers[std::size_t(vs)] * block;
      if (vs == 0) params += embedding, first = true;
      if (vs == vstages - 1) params += head, last = true;
    }
    MemoryEstimate e;
    e.stage = s;
    e.weights_bytes = params * wb / (weights_sharded ? shard : 1.0) + (weights_sharded ? 2 * block * wb : 0.0);
    e.gradients_bytes = params * gb / (grads_sharded ? shard : 1.0) + (grads_sharded ? 2 * block * gb : 0.0);
    e.optimizer_bytes = params * ob / (zero >= 1 ? shard : 1.0);
    const int in_flight = peak_layers_in_flight(p, s, mbs, vlayers);
    e.layers_in_flight = in_flight;
    switch (t.recompute) {
      case Recompute::none: e.activations_bytes = in_flight * full; break;
      case Recompute::selective: e.activations_bytes = in_flight * block_activation_bytes(m, t, p, false); break;
      // Only block inputs are kept; one block's activations are rebuilt at a time in backward.
      case Recompute::full: e.activations_bytes = in_flight * layer_input + full; break;
    }
    if (first || last) e.activations_bytes += layer_input;  // embedding output / final norm input
    if (last) e.logits_bytes = tokens * v / tp * (hardware::storage_bytes(t.precision) + 4.0);
    e.reserved_bytes = gpu.runtime_reserved_bytes;
    e.total_bytes = e.weights_bytes + e.gradients_bytes + e.optimizer_bytes + e.activations_bytes +
                    e.logits_bytes + e.reserved_bytes;
    e.capacity_bytes = gpu.hbm_bytes;
    out.push_back(e);
  }
  return out;
}

MemoryEstimate estimate_memory(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                               const hardware::GpuSpec& gpu) {
  const auto stages = estimate_memory_per_stage(m, t, p, gpu);
  std::size_t pick = 0;
  for (std::size_t s = 1; s < stages.size(); ++s)
    if (stages[s].total_bytes > stages[pick].total_bytes) pick = s;
  return stages[pick];
}

}  // namespace clustersim::models
