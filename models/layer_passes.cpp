#include "models/layer_passes.hpp"

#include "models/linear_attention_ops.hpp"
#include "models/mamba_ops.hpp"
#include "models/mla_ops.hpp"
#include "models/moe_ops.hpp"

namespace clustersim::models {

std::vector<LayerPass> layer_passes(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                    const hardware::GpuSpec& gpu, const StepCosts& c, bool backward) {
  const auto& parts = backward ? c.part_bwd : c.part_fwd;
  auto part = [&](BlockPart b) { return parts[static_cast<std::size_t>(b)]; };
  std::vector<LayerPass> out{{backward ? c.layer_bwd : c.layer_fwd, double(m.layers)}};
  const double attn = m.mixer_count(Mixer::attention), mamba = m.mixer_count(Mixer::mamba);
  const double linear = m.mixer_count(Mixer::linear);
  if (m.mla.enabled()) {
    for (BlockPart b : {qkv, core, attn_out, qkv_wgrad}) out.push_back({part(b), -attn});
    const MlaOps mla = mla_attention_ops(m, t, p, gpu);
    out.push_back({backward ? mla.bwd : mla.fwd, attn});
  }
  if (m.hybrid()) {  // layers without attention, or without an MLP, drop those parts
    for (BlockPart b : {qkv, core, attn_out, qkv_wgrad}) out.push_back({part(b), attn - m.layers});
    out.push_back({part(norm_attn), attn + mamba + linear - m.layers});
    double no_mlp = 0;
    for (int l = 0; l < m.layers; ++l) no_mlp += m.layer_kind(l).mlp == MlpKind::none ? 1 : 0;
    for (BlockPart b : {norm_mlp, mlp, mlp_up_wgrad}) out.push_back({part(b), -no_mlp});
    if (m.mamba.enabled()) {
      const MambaOps o = mamba_mixer_ops(m, t, p, gpu);
      for (const PassCost* pass : {backward ? &o.in_bwd : &o.in_fwd, backward ? &o.core_bwd : &o.core_fwd,
                                   backward ? &o.out_bwd : &o.out_fwd})
        out.push_back({*pass, mamba});
    }
    if (m.linear_attention.enabled()) {
      const MambaOps o = linear_attention_ops(m, t, p, gpu);
      for (const PassCost* pass : {backward ? &o.in_bwd : &o.in_fwd, backward ? &o.core_bwd : &o.core_fwd,
                                   backward ? &o.out_bwd : &o.out_fwd})
        out.push_back({*pass, linear});
    }
  }
  if (m.is_moe()) {
    double moe_layers = 0;
    for (int l = 0; l < m.layers; ++l) moe_layers += m.moe_layer(l) ? 1 : 0;
    for (BlockPart b : {mlp, mlp_up_wgrad}) out.push_back({part(b), -moe_layers});
    const MoeLayerOps o = moe_layer_ops(m, t, p, expert_parallel(p), gpu, t.moe_load_imbalance);
    const PassCost* fwd[] = {&o.router_fwd, &o.permute_fwd, &o.experts_fwd, &o.shared_fwd};
    const PassCost* bwd[] = {&o.router_bwd, &o.permute_bwd, &o.experts_bwd, &o.shared_bwd};
    for (const PassCost* pass : backward ? bwd : fwd) out.push_back({*pass, moe_layers});
  }
  return out;
}

std::vector<LayerPass> recompute_passes(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                        const hardware::GpuSpec& gpu, const StepCosts& c) {
  if (t.recompute == Recompute::full) return layer_passes(m, t, p, gpu, c, false);
  if (t.recompute == Recompute::selective && t.recomputes(RecomputeModule::core_attn)) return {{c.layer_recompute, double(m.mixer_count(Mixer::attention))}};
  return {};
}

}  // namespace clustersim::models
