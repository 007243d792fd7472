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
  // An element-wise op that eager PyTorch runs as `kernels` separate kernels moving `factor`
  // times the bytes of the fused kernel (each intermediate written and read back in HBM).
  KernelOp unfused(std::string name, double fused_bytes, double factor, int kernels) const {
    KernelOp op = memory(std::move(name), fused_bytes * factor);
    op.time_s += (kernels - 1) * gpu.kernel_gap_s;
    return op;
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

// The residual add that closes a sub-block, with the bias add and dropout of the sub-block's
// output projection fused in (Megatron bias_dropout_add): read two, write one; dropout also
// writes its 1-byte mask. Backward: nothing without dropout (the gradient passes through) but
// the bias gradient's read of dy; with dropout read dy and the mask, write dx.
struct ResidualBytes {
  double fwd = 0, bwd = 0;
};
ResidualBytes residual_bytes(const ModelSpec& m, double act, double elem_bytes) {
  const double mask = m.dropout > 0 ? act / elem_bytes : 0.0;
  ResidualBytes r;
  r.fwd = 3 * act + mask;
  r.bwd = m.dropout > 0 ? 2 * act + mask : (m.bias ? act : 0.0);
  return r;
}

// The MLP activation on [tokens, f] (`inner` bytes). Gated (SwiGLU, GeGLU): read gate and up,
// write one; backward reads both and the gradient, writes two. Non-gated (GELU, squared ReLU):
// read one, write one; backward reads input and gradient, writes one. Eager PyTorch runs the
// gated ones as act(gate) then * up (10 B against 6 B forward, 16 against 10 backward, 2
// kernels) and squared ReLU as relu then pow (twice the fused bytes, 2 kernels each way,
// Megatron squared_relu); GELU is one kernel.
KernelOp mlp_activation(const Builder& bld, Activation a, double inner, bool eager, bool backward) {
  static constexpr const char* kNames[] = {"gelu", "swiglu", "relu2", "geglu"};
  const std::string name = std::string(kNames[int(a)]) + (backward ? ".bwd" : "");
  if (gated(a)) {
    const double bytes = (backward ? 5 : 3) * inner;
    return eager ? bld.unfused(name, bytes, backward ? 1.6 : 10.0 / 6.0, 2) : bld.memory(name, bytes);
  }
  const double bytes = (backward ? 3 : 2) * inner;
  return eager && a == Activation::relu2 ? bld.unfused(name, bytes, 2.0, 2) : bld.memory(name, bytes);
}

}  // namespace

StepCosts step_costs(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                     const GpuSpec& gpu) {
  const double s = double(t.seq_len) / p.cp;
  const double b = t.micro_batch;
  const double tokens = b * s;
  const double h = m.hidden, f = m.ffn_hidden, v = m.padded_vocab(p.tp), d = m.head_dim();
  const double tp = p.tp;
  const double q_local = m.heads / tp;
  const double kv_local = std::max(1.0, m.kv_heads / tp);
  const double e = hardware::storage_bytes(t.precision);  // activation bytes per element
  const bool is_gated = gated(m.activation);
  const double f_local = f / tp;
  const double up_width = is_gated ? 2 * f_local : f_local;
  Builder bld{gpu, t.precision, s};
  StepCosts c;
  auto& F = c.part_fwd;
  auto& B = c.part_bwd;

  const double act = tokens * h * e;  // one [tokens, h] activation tensor
  // Norms, residual adds and dropout run on s/tp tokens with sequence parallelism.
  const double sp_act = p.sequence_parallel ? act / tp : act;
  const ResidualBytes res = residual_bytes(m, sp_act, e);
  const double residual = res.fwd, residual_bwd = res.bwd;
  // Residual add closing the previous block (see residual_bytes), then the pre-attention norm:
  // read x, write y (fwd); read x, dy, write dx (bwd).
  F[norm_attn].add(bld.memory("residual2", residual));
  B[norm_attn].add(bld.memory("residual2.bwd", residual_bwd));
  // Eager PyTorch runs the reference composite ops (Llama reference model.py, torchtitan
  // norms.py / complex RoPE) as separate kernels, in bf16 activations with fp32 upcasts:
  //   RMSNorm: x.float() (2 B read, 4 B written per element), pow (4+4), mean (4), x*rsqrt (4+4),
  //     type_as (4+2), *weight (2+2): 36 B against the fused 4 B, 8 kernels; backward likewise.
  //   RoPE: float() (2+4), complex multiply (4+4), type_as (4+2): 20 B against 4 B, 3 kernels
  //     per tensor.
  //   SwiGLU: silu(gate) (2+2) then * up (4+2): 10 B against 6 B, 2 kernels; backward 16 B
  //     against 10 B.
  // LayerNorm and GELU are single kernels in eager mode too.
  const bool eager = !t.fused_elementwise;
  auto norm = [&](const char* name, double fused_bytes) {
    return eager && m.norm == Norm::rmsnorm ? bld.unfused(name, fused_bytes, 9.0, 8) : bld.memory(name, fused_bytes);
  };
  F[norm_attn].add(norm("norm1", 2 * sp_act));
  B[norm_attn].add(norm("norm1.bwd", 3 * sp_act));
  bld.linear(&F[qkv], nullptr, "qkv", tokens, (q_local + 2 * kv_local) * d, h);
  B[qkv].add(bld.gemm("qkv.dgrad", tokens, h, (q_local + 2 * kv_local) * d));
  B[qkv_wgrad].add(bld.gemm("qkv.wgrad", h, (q_local + 2 * kv_local) * d, tokens));
  if (m.position == Position::rope) {
    const double qk = tokens * (q_local + kv_local) * d * e;
    F[qkv].add(eager ? bld.unfused("rotary", 2 * qk, 5.0, 6) : bld.memory("rotary", 2 * qk));
    B[qkv].add(eager ? bld.unfused("rotary.bwd", 2 * qk, 5.0, 6) : bld.memory("rotary.bwd", 2 * qk));
  }
  // Attention core over a causal mask. A flash kernel skips fully masked key blocks (128 wide),
  // so it computes (nb+1)/(2nb) of the s² square; the unfused path computes all of it.
  const double nb = std::ceil(s / 128.0);
  const double causal_fraction = t.flash_attention ? (nb + 1) / (2 * nb) : 1.0;
  const double attn_flop = 4.0 * b * s * s * d * q_local * causal_fraction;
  const double qkv_bytes = tokens * (q_local + 2 * kv_local) * d * e;
  const double o_bytes = tokens * q_local * d * e;
  if (t.flash_attention) {
    F[core].add(bld.attention("attention", attn_flop, qkv_bytes + o_bytes, false));
    // FlashAttention backward recomputes S=QKᵀ: 5 matmuls against 2 in forward.
    B[core].add(bld.attention("attention.bwd", 2.5 * attn_flop, 2 * (qkv_bytes + o_bytes), true));
  } else {
    // Unfused: two batched GEMMs plus a softmax over the materialized [b, a, s, s] scores.
    const double scores = b * q_local * s * s * e;
    auto add_core = [&](PassCost* pc, bool bwd) {
      const double mul = bwd ? 2.0 : 1.0;
      pc->add(bld.attention(bwd ? "qk.bwd" : "qk", mul * 2 * b * s * s * d * q_local, qkv_bytes + scores, bwd));
      pc->add(bld.memory(bwd ? "softmax.bwd" : "softmax", (bwd ? 3 : 2) * scores));
      pc->add(bld.attention(bwd ? "av.bwd" : "av", mul * 2 * b * s * s * d * q_local, scores + o_bytes, bwd));
    };
    add_core(&F[core], false);
    add_core(&B[core], true);
  }
  if (p.cp > 1) {
    // Ring attention with Megatron's load-balanced causal split (each rank holds chunks i and
    // 2cp−1−i): every step against another rank's K/V computes half of an s/cp × s/cp square.
    const double step_flop = 4.0 * b * s * s * d * q_local * 0.5;
    const double kv_bytes = tokens * 2 * kv_local * d * e;
    c.ring_step_fwd.add(bld.attention("ring_attention", step_flop, qkv_bytes + o_bytes, false));
    c.ring_step_bwd.add(bld.attention("ring_attention.bwd", 2.5 * step_flop, 2 * (qkv_bytes + o_bytes), true));
    c.kv_chunk_bytes = kv_bytes;
  }
  bld.linear(&F[attn_out], &B[attn_out], "attn_out", tokens, h, q_local * d);
  F[norm_mlp].add(bld.memory("residual1", residual));
  B[norm_mlp].add(bld.memory("residual1.bwd", residual_bwd));
  F[norm_mlp].add(norm("norm2", 2 * sp_act));
  B[norm_mlp].add(norm("norm2.bwd", 3 * sp_act));
  F[mlp].add(bld.gemm(is_gated ? "mlp_gate_up" : "mlp_up", tokens, up_width, h));
  const double inner = tokens * f_local * e;
  F[mlp].add(mlp_activation(bld, m.activation, inner, eager, false));
  bld.linear(&F[mlp], &B[mlp], "mlp_down", tokens, h, f_local);
  B[mlp].add(mlp_activation(bld, m.activation, inner, eager, true));
  B[mlp].add(bld.gemm(is_gated ? "mlp_gate_up.dgrad" : "mlp_up.dgrad", tokens, h, up_width));
  B[mlp_up_wgrad].add(bld.gemm(is_gated ? "mlp_gate_up.wgrad" : "mlp_up.wgrad", h, up_width, tokens));

  for (int part = 0; part < kBlockParts; ++part) {
    for (const auto& op : F[static_cast<std::size_t>(part)].ops) c.layer_fwd.add(op);
    for (const auto& op : B[static_cast<std::size_t>(part)].ops) c.layer_bwd.add(op);
  }
  for (int step = 1; step < p.cp; ++step) {
    for (const auto& op : c.ring_step_fwd.ops) c.layer_fwd.add(op);
    for (const auto& op : c.ring_step_bwd.ops) c.layer_bwd.add(op);
  }
  if (t.recompute == Recompute::full) c.layer_recompute = c.layer_fwd;
  if (t.recompute == Recompute::selective) {
    c.layer_recompute = F[core];
    for (int step = 1; step < p.cp; ++step)
      for (const auto& op : c.ring_step_fwd.ops) c.layer_recompute.add(op);
  }

  // Embedding lookup (+ learned positions): gather rows, write activations.
  c.embed_fwd.add(bld.memory("embedding", (m.position == Position::learned ? 3 : 2) * act));
  c.embed_bwd.add(bld.memory("embedding.bwd", 3 * act));
  // Head: final norm, logits GEMM over the vocabulary shard, fp32 cross-entropy over logits.
  const double logits = tokens * (v / tp);
  c.head_fwd.add(norm("final_norm", 2 * sp_act));
  bld.linear(&c.head_fwd, &c.head_bwd, "lm_head", tokens, v / tp, h);
  c.head_fwd.add(bld.memory("cross_entropy", logits * (e + 4 + 4)));
  c.head_bwd.add(bld.memory("cross_entropy.bwd", logits * (4 + e)));
  c.head_bwd.add(norm("final_norm.bwd", 3 * sp_act));

  const ParamCount pc = count_params(m, t.seq_len);
  c.layer_params = pc.per_layer / tp;
  c.activation_bytes = act;
  return c;
}

}  // namespace clustersim::models
