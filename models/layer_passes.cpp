#include "models/layer_passes.hpp"

#include <algorithm>

#include "models/compressed_attention_ops.hpp"
#include "models/linear_attention_ops.hpp"
#include "models/mamba_ops.hpp"
#include "models/mla_ops.hpp"
#include "models/moe_ops.hpp"

namespace clustersim::models {

namespace {

// Blocks [lo, hi) of the main stack.
struct BlockRange {
  int lo = 0, hi = 0;
  double size() const { return double(hi - lo); }
  template <class Pred>
  double count(Pred pred) const {
    double n = 0;
    for (int l = lo; l < hi; ++l) n += pred(l) ? 1 : 0;
    return n;
  }
};

// The ops of the blocks of `r`, priced with (t, c).
std::vector<LayerPass> range_passes(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                    const hardware::GpuSpec& gpu, const StepCosts& c, bool backward, BlockRange r) {
  const auto& parts = backward ? c.part_bwd : c.part_fwd;
  auto part = [&](BlockPart b) { return parts[static_cast<std::size_t>(b)]; };
  std::vector<LayerPass> out{{backward ? c.layer_bwd : c.layer_fwd, r.size()}};
  auto mixers = [&](Mixer x) { return r.count([&](int l) { return m.layer_kind(l).mixer == x; }); };
  const double attn = mixers(Mixer::attention), mamba = mixers(Mixer::mamba);
  const double linear = mixers(Mixer::linear);
  if (m.mla.enabled()) {
    for (BlockPart b : {qkv, core, attn_out, qkv_wgrad}) out.push_back({part(b), -attn});
    const MlaOps mla = mla_attention_ops(m, t, p, gpu);
    out.push_back({backward ? mla.bwd : mla.fwd, attn});
  }
  if (const CompressedAttentionSpec& ca = m.compressed_attention; ca.enabled()) {  // by compress ratio
    for (BlockPart b : {qkv, core, attn_out, qkv_wgrad}) out.push_back({part(b), -attn});
    const CompressedAttentionKinds v4 = compressed_attention_kinds(m, t, p, gpu);
    for (std::size_t i = 0; i < kCompressedKinds; ++i) {
      const double n = r.count([&](int l) { return std::size_t(ca.kind_of(l)) == i; });
      if (n > 0) out.push_back({backward ? v4.ops[i].bwd : v4.ops[i].fwd, n});
    }
  }
  if (m.hybrid()) {  // layers without attention, or without an MLP, drop those parts
    for (BlockPart b : {qkv, core, attn_out, qkv_wgrad}) out.push_back({part(b), attn - r.size()});
    out.push_back({part(norm_attn), attn + mamba + linear - r.size()});
    const double no_mlp = r.count([&](int l) { return m.layer_kind(l).mlp == MlpKind::none; });
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
    const double moe_layers = r.count([&](int l) { return m.moe_layer(l); });
    for (BlockPart b : {mlp, mlp_up_wgrad}) out.push_back({part(b), -moe_layers});
    const MoeLayerOps o = moe_layer_ops(m, t, p, expert_parallel(p), gpu, t.moe_load_imbalance);
    const PassCost* fwd[] = {&o.router_fwd, &o.permute_fwd, &o.experts_fwd, &o.shared_fwd};
    const PassCost* bwd[] = {&o.router_bwd, &o.permute_bwd, &o.experts_bwd, &o.shared_bwd};
    for (const PassCost* pass : backward ? bwd : fwd) out.push_back({*pass, moe_layers});
  }
  return out;
}

// training.bf16_layers: the main stack as [0, first) and [last, layers) in BF16, the middle in
// the training precision (`mid`).
struct PrecisionRanges {
  BlockRange head, mid, tail;
};
PrecisionRanges precision_ranges(const ModelSpec& m, const TrainingSpec& t) {
  if (!t.has_bf16_blocks()) return {{}, {0, m.layers}, {}};
  const int first = std::min(t.bf16_layers.first, m.layers);
  const int last = std::max(first, m.layers - t.bf16_layers.last);
  return {{0, first}, {first, last}, {last, m.layers}};
}

}  // namespace

std::vector<LayerPass> layer_passes(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                    const hardware::GpuSpec& gpu, const StepCosts& c, bool backward) {
  const PrecisionRanges r = precision_ranges(m, t);
  std::vector<LayerPass> out = range_passes(m, t, p, gpu, c, backward, r.mid);
  if (!t.has_bf16_blocks()) return out;
  const TrainingSpec b = t.bf16_block();
  const StepCosts cb = step_costs(m, b, p, gpu);
  for (const BlockRange& range : {r.head, r.tail})
    for (LayerPass& lp : range_passes(m, b, p, gpu, cb, backward, range)) out.push_back(std::move(lp));
  return out;
}

namespace {

// The attention cores an MLA, DSA or DeepSeek-V4 block reruns under selective recompute (the
// step program's selective_rerun_s): its own core op, once per attention layer of `r`.
std::vector<LayerPass> own_core_reruns(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                       const hardware::GpuSpec& gpu, BlockRange r) {
  auto core_of = [](const MlaOps& o) {
    PassCost pass;
    for (const KernelOp& op : o.fwd.ops)
      if (attention_core_op(op.name)) pass.add(op);
    return pass;
  };
  if (m.mla.enabled()) return {{core_of(mla_attention_ops(m, t, p, gpu)), r.size()}};
  std::vector<LayerPass> out;
  const CompressedAttentionKinds v4 = compressed_attention_kinds(m, t, p, gpu);
  for (std::size_t i = 0; i < kCompressedKinds; ++i)
    if (const double n = r.count([&](int l) { return std::size_t(m.compressed_attention.kind_of(l)) == i; }); n > 0)
      out.push_back({core_of(v4.ops[i]), n});
  return out;
}

}  // namespace

std::vector<LayerPass> recompute_passes(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                        const hardware::GpuSpec& gpu, const StepCosts& c) {
  if (t.recompute == Recompute::full) return layer_passes(m, t, p, gpu, c, false);
  if (t.recompute != Recompute::selective || !t.recomputes(RecomputeModule::core_attn)) return {};
  const PrecisionRanges r = precision_ranges(m, t);
  if (m.mla.enabled() || m.compressed_attention.enabled()) {
    std::vector<LayerPass> out = own_core_reruns(m, t, p, gpu, r.mid);
    for (const BlockRange& range : {r.head, r.tail})
      if (range.size() > 0)
        for (LayerPass& lp : own_core_reruns(m, t.bf16_block(), p, gpu, range)) out.push_back(std::move(lp));
    return out;
  }
  auto attention = [&](BlockRange range) {
    return range.count([&](int l) { return m.layer_kind(l).mixer == Mixer::attention; });
  };
  std::vector<LayerPass> out{{c.layer_recompute, attention(r.mid)}};
  if (t.has_bf16_blocks())
    out.push_back({step_costs(m, t.bf16_block(), p, gpu).layer_recompute, attention(r.head) + attention(r.tail)});
  return out;
}

}  // namespace clustersim::models
