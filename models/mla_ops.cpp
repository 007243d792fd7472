#include "models/mla_ops.hpp"

#include <cmath>

#include "models/detail/kernel_builder.hpp"
#include "models/dsa_ops.hpp"

namespace clustersim::models {

bool rerun_before_backward(const std::string& name, const TrainingSpec& t) {
  if (t.recompute != Recompute::selective) return false;
  if (t.recomputes(RecomputeModule::mla_up_proj))
    for (const char* prefix : {"mla.q_up", "mla.kv_up", "v4.q_up", "v4.q_head_norm", "v4.kv", "v4.rotary"})
      if (name.rfind(prefix, 0) == 0) return true;
  return t.recomputes(RecomputeModule::mhc) && name.rfind("mhc.", 0) == 0;
}

bool attention_core_op(const std::string& name) {
  return name == "mla.attention" || name == "dsa.sparse_attention" || name == "v4.attention";
}

MlaOps mla_attention_ops(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu) {
  const KernelBuilder k = KernelBuilder::training(gpu, t, p);
  // Its projections in their own precision when the recipe sets one (module_precision).
  const KernelBuilder lin = KernelBuilder::training(gpu, t.for_module(QuantModule::attention_linears), p);
  const auto& a = m.mla;
  const double s = double(t.seq_len) / p.cp, b = t.micro_batch, T = b * s, h = m.hidden;
  const double e = hardware::storage_bytes(t.precision);
  const double heads = double(m.heads) / p.tp, dqk = m.qk_head_dim(), dv = m.v_head_dim();
  MlaOps o;
  if (a.q_lora_rank > 0) {
    lin.linear(&o.fwd, &o.bwd, "mla.q_down", T, a.q_lora_rank, h);
    o.fwd.add(k.memory("mla.q_norm", 2 * T * a.q_lora_rank * e));
    o.bwd.add(k.memory("mla.q_norm.bwd", 3 * T * a.q_lora_rank * e));
    lin.linear(&o.fwd, &o.bwd, "mla.q_up", T, heads * dqk, a.q_lora_rank);
  } else {
    lin.linear(&o.fwd, &o.bwd, "mla.q", T, heads * dqk, h);
  }
  lin.linear(&o.fwd, &o.bwd, "mla.kv_down", T, a.kv_lora_rank + a.qk_rope_head_dim, h);
  o.fwd.add(k.memory("mla.kv_norm", 2 * T * a.kv_lora_rank * e));
  o.bwd.add(k.memory("mla.kv_norm.bwd", 3 * T * a.kv_lora_rank * e));
  lin.linear(&o.fwd, &o.bwd, "mla.kv_up", T, heads * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank);
  // RoPE reads and writes the rope slice of every query head and the one shared rope key.
  const double rope = 2 * T * (heads + 1) * a.qk_rope_head_dim * e;
  o.fwd.add(k.memory("mla.rotary", rope));
  o.bwd.add(k.memory("mla.rotary.bwd", rope));
  if (m.sparse_attention.enabled()) {
    add_dsa_core(m, t, p, gpu, &o);  // the indexer and the sparse core in place of the dense core
  } else {
    const double nb = std::ceil(s / 128.0);
    const double causal = t.flash_attention ? (nb + 1) / (2 * nb) : 1.0;
    o.attention_flop_fwd = 2.0 * b * s * s * heads * (dqk + dv) * causal;
    const double io = T * heads * (2 * dqk + 2 * dv) * e;  // Q, K, V in; O out
    o.fwd.add(k.attention("mla.attention", o.attention_flop_fwd, io, s, false));
    o.bwd.add(k.attention("mla.attention.bwd", 2.5 * o.attention_flop_fwd, 2 * io, s, true));
  }
  lin.linear(&o.fwd, &o.bwd, "mla.o", T, h, heads * dv);
  // Each latent is kept twice: its RMSNorm's input (BF16) and the up projection's input, which
  // Transformer Engine keeps as the quantized copy in FP8/MXFP8 (TrainingSpec::saved_linear_input_bytes).
  const double latents = T * (a.q_lora_rank + a.kv_lora_rank) * (e + t.saved_linear_input_bytes()) +
                         T * a.qk_rope_head_dim * e;
  const double qkv = T * heads * (2 * dqk + dv) * e, out = T * heads * dv * e, lse = 4.0 * b * heads * s;
  o.saved_bytes += latents + qkv + out + lse;
  o.saved_bytes_up_proj_recompute += latents + out + lse;
  return o;
}

}  // namespace clustersim::models
