#include "models/memory.hpp"

#include <algorithm>

namespace clustersim::models {

namespace {

// Bytes one block saves for backward, per micro-batch, with no recompute.
double block_activation_bytes(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                              bool keep_attention_core) {
  const double s = double(t.seq_len) / p.cp, b = t.micro_batch, e = hardware::storage_bytes(t.precision);
  const double tokens = s * b, h = m.hidden, d = m.head_dim();
  const double q = double(m.heads) / p.tp, kv = std::max(1.0, double(m.kv_heads) / p.tp);
  const double f = double(m.ffn_hidden) / p.tp;
  const bool swiglu = m.activation == Activation::swiglu;
  const double act = tokens * h * e;
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
      if (m.has_bias()) bytes += b * q * s * s;  // attention dropout mask
    }
  }
  bytes += act;                                  // norm2 input (residual)
  bytes += act;                                  // MLP input
  bytes += tokens * (swiglu ? 2 * f : f) * e;    // gate/up output
  bytes += tokens * f * e;                       // activation output (down-proj input)
  if (m.has_bias()) bytes += 2 * tokens * h;     // two hidden dropout masks, 1 B each
  return bytes;
}

}  // namespace

MemoryEstimate estimate_memory(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                               const hardware::GpuSpec& gpu) {
  const ParamCount pc = count_params(m, t.seq_len);
  const double params = pc.total / (double(p.tp) * p.pp);
  const bool fp32_weights = t.precision == hardware::Precision::fp32 || t.precision == hardware::Precision::tf32;
  MemoryEstimate e;
  e.weights_bytes = params * (fp32_weights ? 4.0 : 2.0);
  e.gradients_bytes = params * ((t.grad_reduce_fp32 || fp32_weights) ? 4.0 : 2.0);
  e.optimizer_bytes = params * (fp32_weights ? 8.0 : 12.0) / (p.zero_stage >= 1 ? p.dp : 1);

  const int layers_here = (m.layers + p.pp - 1) / p.pp;
  const double full = block_activation_bytes(m, t, p, true);
  const double tokens = double(t.seq_len) / p.cp * t.micro_batch;
  const double layer_input = tokens * m.hidden * hardware::storage_bytes(t.precision);
  switch (t.recompute) {
    case Recompute::none: e.activations_bytes = layers_here * full; break;
    case Recompute::selective:
      e.activations_bytes = layers_here * block_activation_bytes(m, t, p, false); break;
    // Only block inputs are kept; one block's activations are rebuilt at a time in backward.
    case Recompute::full: e.activations_bytes = layers_here * layer_input + full; break;
  }
  e.activations_bytes += layer_input;  // embedding output / final norm input
  const double logits = tokens * double(m.vocab) / p.tp;
  e.logits_bytes = logits * (hardware::storage_bytes(t.precision) + 4.0);
  e.reserved_bytes = gpu.runtime_reserved_bytes;
  e.total_bytes = e.weights_bytes + e.gradients_bytes + e.optimizer_bytes + e.activations_bytes +
                  e.logits_bytes + e.reserved_bytes;
  e.capacity_bytes = gpu.hbm_bytes;
  return e;
}

}  // namespace clustersim::models
