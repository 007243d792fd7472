#include "models/detail/memory_wgrad.hpp"

#include "models/compressed_attention_ops.hpp"
#include "models/layer_ops.hpp"
#include "models/mla_ops.hpp"
#include "models/moe_ops.hpp"

namespace clustersim::models {

WgradKept::WgradKept(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu)
    : m_(m) {
  // In low precision the W pass reads the quantized copies: Transformer Engine's deferred wgrad
  // (module/linear.py, delay_wgrad_compute) stores the quantized input and the columnwise-quantized
  // grad_output (v2.5 to @d0067d0); torchao keeps BF16 (saved_linear_input_bytes).
  const double e = t.saved_linear_input_bytes();
  const StepCosts c = step_costs(m, t, p, gpu);
  auto kept = [&](const PassCost& pass) { return weight_grad_kept_elements(pass) * e; };
  attention_ = kept(c.part_bwd[qkv]) + kept(c.part_bwd[qkv_wgrad]) + kept(c.part_bwd[attn_out]);
  dense_mlp_ = kept(c.part_bwd[mlp]) + kept(c.part_bwd[mlp_up_wgrad]);
  if (m.mla.enabled()) mla_ = kept(mla_attention_ops(m, t, p, gpu).bwd);
  if (m.compressed_attention.enabled()) {
    const CompressedAttentionKinds v4 = compressed_attention_kinds(m, t, p, gpu);
    for (std::size_t i = 0; i < kCompressedKinds; ++i) v4_[i] = kept(v4.ops[i].bwd);
  }
  if (m.is_moe()) {
    const MoeLayerOps o = moe_layer_ops(m, t, p, expert_parallel(p), gpu, t.moe_load_imbalance);
    moe_mlp_ = kept(o.router_bwd) + kept(o.experts_bwd) + kept(o.shared_bwd);
  }
}

double WgradKept::bytes(int layer) const {
  double attention = m_.mla.enabled() ? mla_ : attention_;
  if (m_.compressed_attention.enabled())
    attention = v4_[static_cast<std::size_t>(m_.compressed_attention.kind_of(layer))];
  return attention + (m_.moe_layer(layer) ? moe_mlp_ : dense_mlp_);
}

}  // namespace clustersim::models
