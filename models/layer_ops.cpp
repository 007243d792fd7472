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
  // A fused (flash) attention call: timed by the kernel model from its shape; `flop` is what
  // the step accounts for (the blocks the kernel actually computes).
  KernelOp attention(std::string name, double flop, double bytes, hardware::KernelPass pass,
                     const hardware::AttentionShape& shape) const {
    auto c = hardware::attention_cost(gpu, hardware::default_attention_impl(gpu), prec, pass, shape);
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
  const double h = m.hidden, f = m.ffn_hidden, v = m.padded_vocab(p.tp), d = m.head_dim();
  const double tp = p.tp;
  const double q_local = m.heads / tp;
  const double kv_local = std::max(1.0, m.kv_heads / tp);
  const double e = hardware::storage_bytes(t.precision);  // activation bytes per element
  const bool swiglu = m.activation == Activation::swiglu;
  const double f_local = f / tp;
  const double up_width = swiglu ? 2 * f_local : f_local;
  Builder bld{gpu, t.precision, s};
  StepCosts c;
  auto& F = c.part_fwd;
  auto& B = c.part_bwd;

  const double act = tokens * h * e;  // one [tokens, h] activation tensor
  // Norms, residual adds and dropout run on s/tp tokens with sequence parallelism.
  const double sp_act = p.sequence_parallel ? act / tp : act;
  const double residual = m.has_bias() ? 3.5 * sp_act : 3 * sp_act;
  const double residual_bwd = m.has_bias() ? 2.5 * sp_act : 0.0;
  // Residual add closing the previous block (read two, write one; GELU models also apply
  // dropout and a bias), then the pre-attention norm: read x, write y (fwd); read x, dy,
  // write dx (bwd).
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
    return eager && !m.has_bias() ? bld.unfused(name, fused_bytes, 9.0, 8) : bld.memory(name, fused_bytes);
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
  hardware::AttentionShape ashape;
  ashape.batch = b;
  ashape.heads = int(q_local), ashape.kv_heads = int(kv_local);
  ashape.head_dim_qk = ashape.head_dim_v = int(d);
  ashape.seq_q = ashape.seq_kv = s;
  ashape.causal = true;
  if (t.flash_attention) {
    F[core].add(bld.attention("attention", attn_flop, qkv_bytes + o_bytes, hardware::KernelPass::forward, ashape));
    // FlashAttention backward recomputes S=QKᵀ: 5 matmuls against 2 in forward.
    B[core].add(bld.attention("attention.bwd", 2.5 * attn_flop, 2 * (qkv_bytes + o_bytes),
                              hardware::KernelPass::backward, ashape));
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
    // One ring step: this rank's queries against another rank's K/V chunk, half of it unmasked.
    hardware::AttentionShape ring = ashape;
    ring.causal = false;
    ring.seq_q = s / 2;
    c.ring_step_fwd.add(bld.attention("ring_attention", step_flop, qkv_bytes + o_bytes,
                                      hardware::KernelPass::forward, ring));
    c.ring_step_bwd.add(bld.attention("ring_attention.bwd", 2.5 * step_flop, 2 * (qkv_bytes + o_bytes),
                                      hardware::KernelPass::backward, ring));
    c.kv_chunk_bytes = kv_bytes;
  }
  bld.linear(&F[attn_out], &B[attn_out], "attn_out", tokens, h, q_local * d);
  F[norm_mlp].add(bld.memory("residual1", residual));
  B[norm_mlp].add(bld.memory("residual1.bwd", residual_bwd));
  F[norm_mlp].add(norm("norm2", 2 * sp_act));
  B[norm_mlp].add(norm("norm2.bwd", 3 * sp_act));
  F[mlp].add(bld.gemm(swiglu ? "mlp_gate_up" : "mlp_up", tokens, up_width, h));
  const double inner = tokens * f_local * e;
  // SwiGLU reads gate and up, writes one; GELU reads one, writes one. Backward reads the saved
  // inputs and the gradient, writes the input gradients.
  F[mlp].add(swiglu && eager ? bld.unfused("swiglu", 3 * inner, 10.0 / 6.0, 2)
                             : bld.memory(swiglu ? "swiglu" : "gelu", swiglu ? 3 * inner : 2 * inner));
  bld.linear(&F[mlp], &B[mlp], "mlp_down", tokens, h, f_local);
  B[mlp].add(swiglu && eager ? bld.unfused("swiglu.bwd", 5 * inner, 1.6, 2)
                             : bld.memory(swiglu ? "swiglu.bwd" : "gelu.bwd", swiglu ? 5 * inner : 3 * inner));
  B[mlp].add(bld.gemm(swiglu ? "mlp_gate_up.dgrad" : "mlp_up.dgrad", tokens, h, up_width));
  B[mlp_up_wgrad].add(bld.gemm(swiglu ? "mlp_gate_up.wgrad" : "mlp_up.wgrad", h, up_width, tokens));

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
