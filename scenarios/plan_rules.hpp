#pragma once
// The scenario loader's rules that tie a parallelism plan to the model (and, for EP overlap, to
// the training recipe), not to the cluster, the batch or the sequence length. The loader applies them to parallelism.* keys
// (scenarios/load.cpp, load_moe.cpp) and the --auto-parallel grid (studies/sweep_space.cpp)
// leaves out the plans they refuse: one definition of each rule, and its message, for both.
// Each returns "" when the plan is allowed, else the loader's one-line reason.
#include <string>
#include <vector>

#include "models/model_spec.hpp"
#include "models/training_spec.hpp"

namespace clustersim::scenarios {

/// tp must divide the model's heads, kv_heads and dense ffn_hidden. `model_key` (if given) is
/// set to the model key the refusal is about ("heads", "kv_heads" or "ffn_hidden").
std::string tp_refusal(const models::ModelSpec& m, int tp, std::string* model_key = nullptr);

/// Context parallelism is not modelled with multi-head latent attention (model.mla).
std::string cp_refusal(const models::ModelSpec& m, int cp);

/// Without an explicit parallelism.pp_layers: pp·vpp virtual stages need at least one layer
/// each (the automatic split, models::uneven_stage_layers, counting MTP modules on the last).
/// When allowed and the split is not the even one, `split` (if given) receives its layer counts.
/// `v_shape`: the V schedules' split (models::v_stage_layers) instead.
std::string pipeline_refusal(const models::ModelSpec& m, int pp, int vpp, std::vector<int>* split = nullptr,
                             bool v_shape = false);

/// The expert layout of an MoE model: ep must divide the routed experts, etp the experts' ffn
/// width, and etp·ep the fold tp·cp·dp of a pipeline stage (experts fold over its ranks).
std::string ep_refusal(int ep, int experts);
std::string etp_refusal(int etp, int expert_ffn_hidden);
std::string expert_fold_refusal(int ep, int etp, long fold);
/// Group-limited routing (model.moe.router_groups / router_group_top_k): the groups are contiguous
/// blocks of the routed experts, and each chosen group gives top_k / group_top_k of a token's experts.
std::string router_groups_refusal(int groups, int experts);
std::string router_group_top_k_refusal(int group_top_k, int groups, int top_k);

/// training.moe_a2a_overlap as Megatron-Core accepts --overlap-moe-expert-parallel-comm
/// (TransformerConfig.__post_init__ at d98e8a64dd): ep > 1, the alltoall or flex (deepep)
/// dispatcher, virtual stages when pp > 1, no full recompute and no 'moe' recompute module, at
/// most one MTP layer, a 16-bit model (bf16/fp16, FP8 and FP4 recipes included).
std::string a2a_overlap_refusal(const models::ModelSpec& m, const models::ParallelSpec& p, const models::TrainingSpec& t);

}  // namespace clustersim::scenarios
