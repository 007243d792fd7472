#include "models/layer_ops.hpp"

#include <cmath>

namespace clustersim::models {
namespace {

using hardware::GpuSpec;
using hardware::Precision;

struct Builder {
  const GpuSpec& gpu;
  Precision prec;
  double seq;  // per-rank sequence length (s / cp)

  KernelOp gemm(std::string name, double m, double n, double k) const {
    auto c = hardware::gemm_cost(gpu, prec, m, n, k);
    const double bytes = (m * k + k * n) * hardware::gemm_operand_bytes(prec) +
                         m * n * hardware::storage_bytes(prec);
    return {std::move(name), OpKind::gemm, 2 * m * n * k, bytes, c.time_s, c.bound};
  }
  KernelOp memory(std::string name, double bytes) const {
    auto c = hardware::memory_cost(gpu, bytes);
    return {std::move(name), OpKind::memory, 0, bytes, c.time_s, c.bound};
  }
  KernelOp attention(std::string name, double flop, double bytes, bool backward) const {
    auto c = hardware::attention_cost(gpu, prec, flop, seq, backward);
    return {std::move(name), OpKind::attention, flop, bytes, c.time_s, c.bound};
  }
  // Y[m,n] = X[m,k]·W[k,n]: forward GEMM, and backward dgrad (dX = dY·Wᵀ) + wgrad (dW = Xᵀ·dY).
  // FP8 (Transformer Engine / torchao style): the GEMM inputs are quantized by separate
  // memory-bound kernels that read the bf16 tensor and write it in FP8 twice, row-major and
  // transposed (fused cast-transpose with the amax reduction): X before the forward GEMM (the
  // transpose feeds wgrad), dY before dgrad/wgrad. 2 + 1 + 1 bytes per element. Weights are cast
  // once per step (cached across micro-batches) and not counted here.
  void linear(PassCost* fwd, PassCost* bwd, const std::string& name, double m, double n,
              double k) const {
    const bool fp8 = prec == Precision::fp8;
    if (fwd) {
      if (fp8) fwd->add(memory(name + ".cast_fp8", m * k * 4.0));
      fwd->add(gemm(name, m, n, k));
    }
    if (bwd) {
      if (fp8) bwd->add(memory(name + ".grad_cast_fp8", m * n * 4.0));
      bwd->add(gemm(name + ".dgrad", m, k, n));
      bwd->add(gemm(name + ".wgrad", k, n, m));
    }
  }
};

}  // namespace

StepCosts step_costs(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                     const GpuSpec& gpu) {
  const double s = double(t.seq_len) / p.cp;
  const double b = t.micro_batch;
  const double tokens = b * s;
  const double h = m.hidden, f = m.ffn_hidden, v = m.vocab, d = m.head_dim();
  const double tp = p.tp;
  const double q_local = m.heads / tp;
  const double kv_local = std::max(1.0, m.kv_heads / tp);
  const double e = hardware::storage_bytes(t.precision);  // activation bytes per element
  const bool swiglu = m.activation == Activation::swiglu;
  const double f_local = f / tp;
  const double up_width = swiglu ? 2 * f_local : f_local;
  Builder bld{gpu, t.precision, s};
  StepCosts c;

  const double act = tokens * h * e;  // one [tokens, h] activation tensor
  // Pre-attention norm: read x, write y (fwd); read x, dy, write dx (bwd).
  c.layer_fwd.add(bld.memory("norm1", 2 * act));
  c.layer_bwd.add(bld.memory("norm1.bwd", 3 * act));
  bld.linear(&c.layer_fwd, &c.layer_bwd, "qkv", tokens, (q_local + 2 * kv_local) * d, h);
  if (m.position == Position::rope) {
    const double qk = tokens * (q_local + kv_local) * d * e;
    c.layer_fwd.add(bld.memory("rotary", 2 * qk));
    c.layer_bwd.add(bld.memory("rotary.bwd", 2 * qk));
  }
  // Attention core over a causal mask. A flash kernel skips fully masked key blocks (128 wide),
  // so it computes (nb+1)/(2nb) of the s² square; the unfused path computes all of it.
  const double nb = std::ceil(s / 128.0);
  const double causal_fraction = t.flash_attention ? (nb + 1) / (2 * nb) : 1.0;
  const double attn_flop = 4.0 * b * s * s * d * q_local * causal_fraction;
  const double qkv_bytes = tokens * (q_local + 2 * kv_local) * d * e;
  const double o_bytes = tokens * q_local * d * e;
  if (t.flash_attention) {
    const auto fwd = bld.attention("attention", attn_flop, qkv_bytes + o_bytes, false);
    c.layer_fwd.add(fwd);
    // FlashAttention backward recomputes S=QKᵀ: 5 matmuls against 2 in forward.
    c.layer_bwd.add(bld.attention("attention.bwd", 2.5 * attn_flop, 2 * (qkv_bytes + o_bytes), true));
    if (t.recompute == Recompute::selective) c.layer_recompute.add(fwd);
  } else {
    // Unfused: two batched GEMMs plus a softmax over the materialized [b, a, s, s] scores.
    const double scores = b * q_local * s * s * e;
    auto add_core = [&](PassCost* pc, bool bwd) {
      const double mul = bwd ? 2.0 : 1.0;
      pc->add(bld.attention(bwd ? "qk.bwd" : "qk", mul * 2 * b * s * s * d * q_local, qkv_bytes + scores, bwd));
      pc->add(bld.memory(bwd ? "softmax.bwd" : "softmax", (bwd ? 3 : 2) * scores));
      pc->add(bld.attention(bwd ? "av.bwd" : "av", mul * 2 * b * s * s * d * q_local, scores + o_bytes, bwd));
    };
    add_core(&c.layer_fwd, false);
    add_core(&c.layer_bwd, true);
    if (t.recompute == Recompute::selective) add_core(&c.layer_recompute, false);
  }
  bld.linear(&c.layer_fwd, &c.layer_bwd, "attn_out", tokens, h, q_local * d);
  // Residual add (read two, write one); GELU models also apply dropout and a bias here.
  const double residual = m.has_bias() ? 3.5 * act : 3 * act;
  c.layer_fwd.add(bld.memory("residual1", residual));
  c.layer_bwd.add(bld.memory("residual1.bwd", m.has_bias() ? 2.5 * act : 0.0));
  c.layer_fwd.add(bld.memory("norm2", 2 * act));
  c.layer_bwd.add(bld.memory("norm2.bwd", 3 * act));
  bld.linear(&c.layer_fwd, &c.layer_bwd, swiglu ? "mlp_gate_up" : "mlp_up", tokens, up_width, h);
  const double inner = tokens * f_local * e;
  // SwiGLU reads gate and up, writes one; GELU reads one, writes one. Backward reads the saved
  // inputs and the gradient, writes the input gradients.
  c.layer_fwd.add(bld.memory(swiglu ? "swiglu" : "gelu", swiglu ? 3 * inner : 2 * inner));
  c.layer_bwd.add(bld.memory(swiglu ? "swiglu.bwd" : "gelu.bwd", swiglu ? 5 * inner : 3 * inner));
  bld.linear(&c.layer_fwd, &c.layer_bwd, "mlp_down", tokens, h, f_local);
  c.layer_fwd.add(bld.memory("residual2", residual));
  c.layer_bwd.add(bld.memory("residual2.bwd", m.has_bias() ? 2.5 * act : 0.0));
  if (t.recompute == Recompute::full) c.layer_recompute = c.layer_fwd;

  // Embedding lookup (+ learned positions): gather rows, write activations.
  c.embed_fwd.add(bld.memory("embedding", (m.position == Position::learned ? 3 : 2) * act));
  c.embed_bwd.add(bld.memory("embedding.bwd", 3 * act));
  // Head: final norm, logits GEMM over the vocabulary shard, fp32 cross-entropy over logits.
  const double logits = tokens * (v / tp);
  c.head_fwd.add(bld.memory("final_norm", 2 * act));
  bld.linear(&c.head_fwd, &c.head_bwd, "lm_head", tokens, v / tp, h);
  c.head_fwd.add(bld.memory("cross_entropy", logits * (e + 4 + 4)));
  c.head_bwd.add(bld.memory("cross_entropy.bwd", logits * (4 + e)));
  c.head_bwd.add(bld.memory("final_norm.bwd", 3 * act));

  const ParamCount pc = count_params(m, t.seq_len);
  c.layer_params = pc.per_layer / tp;
  return c;
}

}  // namespace clustersim::models
