#include "scenarios/plan_rules.hpp"

#include <fmt/format.h>

#include <utility>

#include "models/pipeline.hpp"

namespace clustersim::scenarios {

std::string tp_refusal(const models::ModelSpec& m, int tp, std::string* model_key) {
  // DeepSeek-V4's one key/value head and per-layer compressors: Megatron-Core runs it (dev branch,
  // deepseek_v4_hybrid_attention.py) and Megatron-Bridge's V4 recipes run it at TP 1 only.
  if (m.compressed_attention.enabled() && tp > 1) {
    if (model_key) *model_key = "compressed_attention";
    return fmt::format(
        "tp = {} with DeepSeek-V4's compressed attention (model.compressed_attention) is not modelled "
        "(every Megatron-Bridge V4 recipe runs TP 1); use tp: 1 with ep, pp and ZeRO",
        tp);
  }
  const std::pair<const char*, int> dims[] = {{"heads", m.heads}, {"kv_heads", m.kv_heads}, {"ffn_hidden", m.ffn_hidden}};
  for (const auto& [key, n] : dims)
    if (n % tp != 0) {
      if (model_key) *model_key = key;
      return fmt::format("tp = {} must divide the model's {} ({})", tp, key, n);
    }
  // Mamba-1 channels could be split over TP, but x_proj's [dt, B, C] would then be partial sums that
  // need an all-reduce over TP per layer, which the step program does not place.
  if (m.mamba.mamba1() && tp > 1) {
    if (model_key) *model_key = "mamba.kind";
    return fmt::format("tp = {} with Mamba-1 layers (model.mamba.kind: mamba1) is not modelled (x_proj's partial sums "
                       "would need an all-reduce over TP); use tp: 1 with ep, pp and ZeRO", tp);
  }
  // Megatron-Core MambaMixer splits the SSM heads and the B/C groups over TP.
  if (m.mamba.enabled() && !m.mamba.mamba1())
    for (const auto& [key, n] : {std::pair<const char*, int>{"mamba.heads", m.mamba.heads}, {"mamba.groups", m.mamba.groups}})
      if (n % tp != 0) {
        if (model_key) *model_key = key;
        return fmt::format("tp = {} must divide the model's {} ({}): Mamba heads and groups are split over TP", tp, key, n);
      }
  // Megatron-Core GatedDeltaNet splits the key and value heads over TP.
  if (m.linear_attention.enabled())
    for (const auto& [key, n] : {std::pair<const char*, int>{"linear_attention.heads", m.linear_attention.heads},
                                 {"linear_attention.key_heads", m.linear_attention.qk_heads()}})
      if (n % tp != 0) {
        if (model_key) *model_key = key;
        return fmt::format("tp = {} must divide the model's {} ({}): linear-attention heads are split over TP", tp, key, n);
      }
  return "";
}

std::string cp_refusal(const models::ModelSpec& m, int cp) {
  if (m.mla.enabled() && cp > 1)
    return "context parallelism with multi-head latent attention (model.mla) is not modelled; use cp: 1";
  if (m.compressed_attention.enabled() && cp > 1)
    return "context parallelism with DeepSeek-V4's compressed attention (model.compressed_attention) is not modelled; "
           "use cp: 1";
  if (m.mamba.enabled() && cp > 1)
    return "context parallelism with Mamba layers (model.mamba) is not modelled; use cp: 1";
  if (m.linear_attention.enabled() && cp > 1)
    return "context parallelism with linear-attention layers (model.linear_attention) is not modelled; use cp: 1";
  return "";
}

std::string pipeline_refusal(const models::ModelSpec& m, int pp, int vpp, std::vector<int>* split, bool v_shape) {
  const int vstages = pp * vpp, extra = models::mtp_layer_equivalents(m.mtp_layers);
  if (m.layers % vstages == 0 && !models::automatic_split(m.layers, vstages, extra)) return "";
  const models::UnevenSplit rule =
      v_shape ? models::v_stage_layers(m.layers, pp, extra) : models::uneven_stage_layers(m.layers, vstages, extra);
  if (std::vector<int> layers = rule.layers; !layers.empty()) {
    if (split) *split = std::move(layers);
    return "";
  }
  if (v_shape)
    return fmt::format("pp = {} needs at least 2·(pp − 1) = {} layers for the V (one per chunk off rank 0); the model has {}",
                       pp, 2 * (pp - 1), m.layers);
  return fmt::format("pp*vpp = {} exceeds the model's {} layers (at least one layer per stage)", vstages, m.layers);
}

std::string ep_refusal(int ep, int experts) {
  if (experts % ep == 0) return "";
  return fmt::format("ep = {} must divide the model's {} routed experts", ep, experts);
}

std::string etp_refusal(int etp, int expert_ffn_hidden) {
  if (expert_ffn_hidden % etp == 0) return "";
  return fmt::format("etp = {} must divide the experts' ffn width {}", etp, expert_ffn_hidden);
}

std::string router_groups_refusal(int groups, int experts) {
  if (groups >= 1 && experts % groups == 0) return "";
  return fmt::format("{} does not divide the {} routed experts (groups are contiguous blocks)", groups, experts);
}

std::string router_group_top_k_refusal(int group_top_k, int groups, int top_k) {
  if (group_top_k < 1 || group_top_k > groups)
    return fmt::format("{} is out of range; allowed 1..{}", group_top_k, groups);
  if (group_top_k == groups || top_k % group_top_k == 0) return "";
  return fmt::format(
      "{} does not divide top_k {} (each chosen group gives top_k / router_group_top_k experts, as "
      "Megatron's group scores sum that many)",
      group_top_k, top_k);
}

std::string expert_fold_refusal(int ep, int etp, long fold) {
  if (fold % (long(etp) * ep) == 0) return "";
  return fmt::format("etp·ep = {}·{} = {} must divide tp·cp·dp = {} (experts fold over the ranks of a pipeline stage)",
                     etp, ep, long(etp) * ep, fold);
}

std::string a2a_overlap_refusal(const models::ModelSpec& m, const models::ParallelSpec& p, const models::TrainingSpec& t) {
  using models::Recompute;
  if (p.ep < 2) return "needs expert parallelism (ep > 1): there is no all-to-all to overlap";
  if (t.moe_dispatcher == models::MoeDispatcher::allgather)
    return "needs moe_dispatcher alltoall or deepep (Megatron: alltoall or flex), not allgather";
  if (p.schedule == models::PipelineSchedule::zbv || p.schedule == models::PipelineSchedule::gpipe)
    return fmt::format("has nothing to pair under schedule {}: it runs no forward beside a backward",
                       models::name(p.schedule));
  if (p.pp > 1 && p.vpp < 2) return fmt::format("with pp = {} needs virtual stages (vpp > 1), as Megatron requires", p.pp);
  if (t.recompute == Recompute::full) return "cannot run with recompute: full (Megatron disables it)";
  if (t.recompute == Recompute::selective && t.recomputes(models::RecomputeModule::moe))
    return "cannot run with the 'moe' recompute module (Megatron disables it)";
  if (m.mtp_layers > 1) return fmt::format("supports at most one MTP layer (model has {})", m.mtp_layers);
  if (t.precision == hardware::Precision::fp32 || t.precision == hardware::Precision::tf32)
    return fmt::format("needs a 16-bit model (bf16 or fp16, FP8/FP4 recipes included), not {}", hardware::name(t.precision));
  return "";
}

}  // namespace clustersim::scenarios
