// The Megatron-Bridge training recipes an override YAML can be merged onto (`clustersim import
// megatron-bridge FILE --recipe NAME`), as Megatron-Bridge merges it (the recipe function builds the
// ConfigContainer, OmegaConf.merge lays the file over it). Each is the values its function sets that change
// a step, read from the source at the commit named, written as ConfigContainer YAML; the model is the one
// the recipe builds (a provider class, or AutoBridge's conversion of the Hugging Face config it names).
// A recipe's other values (learning rate, data, logging, checkpoints) do not change a step and are left out.
#include "scenarios/import/megatron_bridge_config.hpp"

namespace clustersim::scenarios::importers::mbridge {

const std::vector<TrainingRecipe>& training_recipes() {
  static const std::vector<TrainingRecipe> recipes = {
      {"llama32_1b_pretrain_config",
       "megatron.bridge.recipes.llama.llama32_1b_pretrain_config = llama32_1b_pretrain_1gpu_h100_bf16_config "
       "(src/megatron/bridge/recipes/llama/h100/llama3.py over recipes/common.py _pretrain_common, "
       "NVIDIA-NeMo/Megatron-Bridge 067f987, 2026-08-22)",
       R"(# AutoBridge.from_hf_pretrained("meta-llama/Llama-3.2-1B").get_model_config(): LlamaBridge over its config.json
model:
  num_layers: 16
  hidden_size: 2048
  ffn_hidden_size: 8192
  num_attention_heads: 32
  num_query_groups: 8
  kv_channels: 64
  vocab_size: 128256
  normalization: RMSNorm
  activation_func: silu
  gated_linear_unit: true
  position_embedding_type: rope
  add_bias_linear: false
  share_embeddings_and_output_weights: true
  hidden_dropout: 0.0
  attention_dropout: 0.0
  bf16: true
  tensor_model_parallel_size: 1
  pipeline_model_parallel_size: 1
  pipeline_model_parallel_layout: null
  virtual_pipeline_model_parallel_size: null
  context_parallel_size: 1
  sequence_parallel: false
  seq_length: 8192
  transformer_impl: transformer_engine
  cuda_graph_impl: none
  cuda_graph_scope: full
  attention_backend: null
  cross_entropy_loss_fusion: true
  cross_entropy_fusion_impl: te
  recompute_granularity: null
  recompute_modules: null
  fine_grained_activation_offloading: false
train:
  train_iters: 1168251
  global_batch_size: 512
  micro_batch_size: 1
optimizer:
  use_precision_aware_optimizer: false
ddp:
  overlap_grad_reduce: true
  overlap_param_gather: true
  use_distributed_optimizer: true
  use_megatron_fsdp: false
  grad_reduce_in_fp32: true
  data_parallel_sharding_strategy: no_shard
dataset:
  seq_length: 8192
mixed_precision: bf16_mixed
comm_overlap: null
env_vars:
  NCCL_GRAPH_REGISTER: 0
  NCCL_NVLS_ENABLE: 0
  PYTORCH_CUDA_ALLOC_CONF: expandable_segments:True
  TORCH_NCCL_AVOID_RECORD_STREAMS: 1
  TORCH_NCCL_HIGH_PRIORITY: 1
)",
       {}},
      {"llama3_8b_pretrain_config",
       "megatron.bridge.recipes.llama.llama3_8b_pretrain_config (src/megatron/bridge/recipes/llama/llama3.py "
       "_llama3_common, NVIDIA-NeMo/Megatron-Bridge 6756e35, 2025-11-25)",
       R"(# hf_path meta-llama/Meta-Llama-3-8B through AutoBridge: LlamaBridge.provider_bridge -> LlamaModelProvider
model:
  num_layers: 32
  hidden_size: 4096
  ffn_hidden_size: 14336
  num_attention_heads: 32
  num_query_groups: 8
  kv_channels: null
  vocab_size: 128256
  normalization: RMSNorm
  activation_func: silu
  gated_linear_unit: true
  position_embedding_type: rope
  add_bias_linear: false
  share_embeddings_and_output_weights: false
  hidden_dropout: 0.0
  attention_dropout: 0.0
  bf16: true
  tensor_model_parallel_size: 1
  pipeline_model_parallel_size: 1
  virtual_pipeline_model_parallel_size: null
  context_parallel_size: 2
  sequence_parallel: false
  seq_length: 8192
  cross_entropy_loss_fusion: true
  cross_entropy_fusion_impl: te
train:
  train_iters: 1168251
  global_batch_size: 512
  micro_batch_size: 1
ddp:
  grad_reduce_in_fp32: true
  overlap_grad_reduce: true
  overlap_param_gather: true
  use_distributed_optimizer: true
  use_megatron_fsdp: false
dataset:
  seq_length: 8192
mixed_precision: bf16_mixed
comm_overlap: null
)",
       {}},
      {"deepseek_v3_pretrain_config",
       "megatron.bridge.recipes.deepseek.deepseek_v3.pretrain_config "
       "(src/megatron/bridge/recipes/deepseek/deepseek_v3.py "
       "with DeepSeekV3Provider, models/deepseek/deepseek_provider.py, NVIDIA-NeMo/Megatron-Bridge 6292d34, "
       "2025-09-09)",
       R"(# DeepSeekV3Provider (DeepSeekProvider's defaults) as model_config() sets it
model:
  num_layers: 61
  hidden_size: 7168
  ffn_hidden_size: 18432
  num_attention_heads: 128
  kv_channels: 128
  multi_latent_attention: true
  q_lora_rank: 1536
  kv_lora_rank: 512
  qk_head_dim: 128
  qk_pos_emb_head_dim: 64
  v_head_dim: 128
  num_moe_experts: 256
  moe_ffn_hidden_size: 2048
  moe_shared_expert_intermediate_size: 2048
  moe_layer_freq: "[0]*3+[1]*58"
  moe_router_topk: 8
  moe_router_num_groups: 8
  moe_router_group_topk: 4
  moe_grouped_gemm: true
  moe_token_dispatcher_type: alltoall
  moe_shared_expert_overlap: true
  moe_permute_fusion: true
  vocab_size: 129280
  normalization: RMSNorm
  activation_func: silu
  gated_linear_unit: true
  position_embedding_type: rope
  add_bias_linear: false
  share_embeddings_and_output_weights: false
  hidden_dropout: 0.0
  attention_dropout: 0.0
  bf16: true
  cross_entropy_loss_fusion: true
  cross_entropy_fusion_impl: te
  mtp_num_layers: 1
  tensor_model_parallel_size: 2
  pipeline_model_parallel_size: 16
  virtual_pipeline_model_parallel_size: null
  context_parallel_size: 1
  expert_model_parallel_size: 64
  sequence_parallel: true
  recompute_granularity: null
  seq_length: 4096
train:
  train_iters: 1000000
  global_batch_size: 4096
  micro_batch_size: 1
optimizer:
  use_precision_aware_optimizer: true
  main_params_dtype: float32
  main_grads_dtype: bfloat16
  exp_avg_dtype: bfloat16
  exp_avg_sq_dtype: bfloat16
ddp:
  grad_reduce_in_fp32: false
  overlap_grad_reduce: true
  overlap_param_gather: true
  use_distributed_optimizer: true
  use_megatron_fsdp: false
dataset:
  sequence_length: 4096
mixed_precision:
  _target_: megatron.bridge.training.mixed_precision.MixedPrecisionConfig
  bf16: true
  grad_reduce_in_fp32: false
comm_overlap:
  tp_comm_overlap: false
)",
       // model_config()'s map_pp_vp_to_layout: the layout for the pipeline the recipe is called with
       // (the performance script calls it with the pp and vpp its YAML sets).
       {{{1, 1}, ""},
        {{4, 1}, "Et*16|t*16|t*16|t*13L"},
        {{8, 1}, "Et*8|(t*8|)*6t*5L"},
        {{4, 2}, "Et*8|(t*8|)*6t*5L"},
        {{16, 1}, "Et*4|(t*4|)*14tL"},
        {{8, 2}, "Et*4|(t*4|)*14tL"},
        {{4, 4}, "Et*4|(t*4|)*14tL"}}},
  };
  return recipes;
}

const TrainingRecipe* find_training_recipe(const std::string& name) {
  for (const auto& r : training_recipes())
    if (name == r.name) return &r;
  return nullptr;
}

}  // namespace clustersim::scenarios::importers::mbridge
