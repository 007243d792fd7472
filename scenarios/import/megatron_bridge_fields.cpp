// The ConfigContainer fields the Megatron-Bridge importer knows, section by section, and the
// mixed-precision recipes. Field names and defaults are those of Megatron-Bridge
// (src/megatron/bridge/training/config.py, models/gpt_provider.py, training/mixed_precision.py,
// training/comm_overlap.py at NVIDIA-NeMo/Megatron-Bridge 067f987, 2026-08-22) and of the Megatron-Core
// and Megatron-LM classes they extend (TransformerConfig, MLATransformerConfig, ModelParallelConfig,
// DistributedDataParallelConfig, OptimizerConfig, megatron/training/config/*.py at NVIDIA/Megatron-LM
// d98e8a6, 2026-08-22).
//
// Ignored without a warning, because they cannot change a step's speed or memory: the sections rng,
// rerun_state_machine, scheduler, logger, checkpoint, validation, ft, straggler, nvrx_straggler,
// profiling, inprocess_restart, optimizer_config_override_provider (seeds, learning-rate schedule, logging,
// checkpoint paths and intervals, evaluation, fault tolerance, profiler windows); in the others the fields
// listed as ignored below (initialisation, numerical constants such as epsilons and RoPE bases, router loss
// coefficients, kernel fusions Megatron-LM's importer also ignores, inference-only settings, dtype fields that
// follow the precision, learning rates, data paths and loader settings, tokenizer files).
#include "scenarios/import/megatron_bridge_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace clustersim::scenarios::importers::mbridge {
namespace {

struct SectionTable {
  std::set<std::string> mapped, ignored;
  std::map<std::string, std::string> known;  // field -> default (normalized)
  bool others_ignored = false;               // a field not listed is ignored (dataset, tokenizer)
  std::vector<std::string> ignored_prefixes;
};

// Tables of field names, packed several to a line.
// clang-format off
// The model section: the fields mapped, ignored, and known with their defaults.
std::set<std::string> model_mapped() {
  return {
      "num_layers", "hidden_size", "num_attention_heads", "num_query_groups", "ffn_hidden_size", "kv_channels",
      "gated_linear_unit", "activation_func", "share_embeddings_and_output_weights", "position_embedding_type",
      "normalization", "add_bias_linear", "add_qkv_bias", "hidden_dropout", "attention_dropout", "vocab_size",
      "seq_length", "num_moe_experts", "moe_router_topk", "moe_ffn_hidden_size",
      "moe_shared_expert_intermediate_size", "moe_layer_freq", "moe_expert_capacity_factor",
      "moe_token_dispatcher_type", "moe_flex_dispatcher_backend", "moe_enable_deepep", "moe_deepep_num_sms",
      "moe_hybridep_num_sms", "moe_flex_dispatcher_num_sms", "moe_grouped_gemm",
      "moe_router_force_load_balancing", "moe_router_fusion", "moe_permute_fusion", "moe_router_num_groups",
      "moe_router_group_topk", "overlap_moe_expert_parallel_comm", "multi_latent_attention", "q_lora_rank", "kv_lora_rank", "qk_head_dim",
      "qk_pos_emb_head_dim", "v_head_dim", "mtp_num_layers", "window_size", "window_attn_skip_freq",
      "tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size",
      "expert_model_parallel_size", "expert_tensor_parallel_size", "virtual_pipeline_model_parallel_size",
      "sequence_parallel", "num_layers_in_first_pipeline_stage", "num_layers_in_last_pipeline_stage",
      "account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split",
      "pipeline_model_parallel_layout", "overlap_p2p_comm", "tp_comm_overlap", "recompute_granularity",
      "recompute_method", "recompute_num_layers", "recompute_modules", "cpu_offloading",
      "cpu_offloading_num_layers", "activation_func_fp8_input_store", "first_last_layers_bf16",
      "num_layers_at_start_in_bf16", "num_layers_at_end_in_bf16", "cross_entropy_loss_fusion",
      "cross_entropy_fusion_impl", "attention_backend", "enable_cuda_graph", "external_cuda_graph",
      "cuda_graph_impl", "cuda_graph_scope", "cuda_graph_modules", "bf16", "fp16", "fp8", "fp8_recipe", "fp4",
      "fp4_recipe", "transformer_impl"
  };
}

std::set<std::string> model_ignored() {
  return {
      "_target_", "perform_initialization", "use_cpu_initialization", "params_dtype", "timers",
      "finalize_model_grads_func",
      "grad_scale_func", "moe_grad_scale_func", "mtp_grad_scale_func", "no_sync_func", "grad_sync_func",
      "param_sync_func", "enable_autocast", "autocast_dtype", "pipeline_dtype", "use_te_rng_tracker",
      "tp_comm_bulk_wgrad", "tp_comm_bulk_dgrad", "tp_comm_overlap_ag", "tp_comm_overlap_rs",
      "tp_comm_overlap_rs_dgrad", "tp_comm_split_ag", "tp_comm_atomic_ag", "tp_comm_split_rs",
      "tp_comm_atomic_rs", "tp_comm_overlap_disable_qkv", "tp_comm_overlap_disable_fc1",
      "tp_comm_bootstrap_backend", "tp_comm_overlap_cfg", "batch_p2p_comm", "batch_p2p_sync",
      "deallocate_pipeline_outputs", "barrier_with_L1_time", "_cpu_offloading_context", "mtp_loss_scaling_factor",
      "layernorm_epsilon", "layernorm_zero_centered_gamma", "rotary_interleaved", "init_method",
      "output_layer_init_method", "init_method_std", "embedding_init_method", "embedding_init_method_std",
      "init_model_with_meta_device", "apply_query_key_layer_scaling", "attention_softmax_in_fp32", "test_mode",
      "calculate_per_token_loss", "softmax_scale", "qk_layernorm", "qk_l2_norm", "qk_clip", "qk_clip_alpha",
      "qk_clip_threshold", "log_max_attention_logit", "moe_aux_loss_coeff", "moe_z_loss_coeff",
      "moe_input_jitter_eps", "moe_per_layer_logging", "moe_token_drop_policy", "moe_enable_routing_replay",
      "rotary_base", "rotary_percent", "rope_scaling", "rope_scaling_factor", "rotary_scaling_factor",
      "scale_factor", "seq_len_interpolation_factor", "mscale", "mscale_all_dim", "rope_type",
      "original_max_position_embeddings", "beta_fast", "beta_slow", "fp8_margin", "fp8_interval",
      "fp8_amax_history_len", "fp8_amax_compute_algo", "tp_only_amax_red", "fp16_lm_cross_entropy", "logit_dtype",
      "parallel_output", "make_vocab_size_divisible_by", "should_pad_vocab", "max_position_embeddings",
      "hf_model_id", "hf_model_revision", "generation_config", "transformer_layer_spec", "restore_modelopt_state",
      "use_arbitrary_attention_mask", "_pg_collection", "config_logger_dir", "flash_decode",
      "nccl_all_reduce_for_prefill", "use_inference_optimized_layers", "mlp_chunks_for_prefill",
      "cuda_graph_warmup_steps", "cuda_graph_use_single_mempool", "cuda_graph_retain_backward_graph",
      "inference_cuda_graph_scope", "clone_scatter_output_in_embedding", "scatter_embedding_sequence_parallel",
      "mtp_enabled", "hetereogenous_dist_checkpoint", "gradient_accumulation_fusion", "masked_softmax_fusion",
      "bias_dropout_fusion", "bias_activation_fusion", "bias_swiglu_fusion", "apply_rope_fusion",
      "persist_layer_norm", "memory_efficient_layer_norm", "async_tensor_model_parallel_allreduce",
      "variable_seq_lengths", "use_transformer_engine_full_layer_spec", "use_transformer_engine_op_fuser",
      "vocab_file", "moe_pad_experts_for_cuda_graph_inference", "batch_invariant_backend", "builder",
      "extra_checkpoint_metadata"
  };
}

// TransformerConfig, ModelParallelConfig and GPTModelProvider fields neither mapped nor ignored, with
// their defaults: warned when a file sets another value.
std::map<std::string, std::string> model_known() {
  return {
      {"activation_func_clamp_value", "null"},
      {"activation_offload_fraction", "1.0"}, {"apply_residual_connection_post_layernorm", "false"},
      {"attention_output_gate", "false"}, {"batch_invariant_mode", "false"}, {"cache_mla_latents", "false"},
      {"cp_comm_type", "null"}, {"cpu_offloading_activations", "true"},
      {"cpu_offloading_double_buffering", "false"}, {"cpu_offloading_retain_pinned_cpu_buffers", "false"},
      {"cpu_offloading_weights", "false"}, {"defer_embedding_wgrad_compute", "false"},
      {"delay_offload_until_cuda_graph", "false"}, {"delay_wgrad_compute", "false"},
      {"delta_offload_bytes_across_pp_ranks", "0"}, {"dense_grouped_gemm", "false"},
      {"deterministic_mode", "false"}, {"disable_bf16_reduced_precision_matmul", "false"},
      {"disable_parameter_transpose_cache", "false"}, {"distribute_saved_activations", "false"},
      {"dsa_indexer_head_dim", "null"}, {"dsa_indexer_k_norm_epsilon", "null"},
      {"dsa_indexer_k_norm_fp32", "false"}, {"dsa_indexer_loss_coeff", "null"}, {"dsa_indexer_n_heads", "null"},
      {"dsa_indexer_rope_interleaved", "false"}, {"dsa_indexer_rotate_activation", "true"},
      {"dsa_indexer_scoring_relu", "true"}, {"dsa_indexer_skip_topk_offset", "0"}, {"dsa_indexer_topk", "null"},
      {"dsa_indexer_topk_freq", "1"}, {"dsa_indexer_use_sparse_loss", "false"}, {"dsa_kernel_backend", "none"},
      {"enable_mhc_connections", "false"}, {"ep_overlap_early_attn_memory_release", "false"},
      {"experimental_attention_variant", "null"}, {"experimental_attention_variant_loss_scale_func", "null"},
      {"expert_gtp_weight_remat_size", "1"}, {"expert_tensor_parallel_num_weight_shards", "null"},
      {"fine_grained_activation_offloading", "false"}, {"fine_grained_offloading_max_inflight_offloads", "null"},
      {"flash_attention_version", "null"}, {"fp32_residual_connection", "false"}, {"fp4_param", "false"},
      {"fp4_quantizer_factory", "null"}, {"fp8_dot_product_attention", "false"},
      {"fp8_multi_head_attention", "false"}, {"fp8_output_proj", "false"}, {"fp8_param", "false"},
      {"fp8_quantizer_factory", "null"}, {"fp8_wgrad", "true"}, {"fused_residual_rmsnorm", "false"},
      {"fused_single_qkv_rope", "false"}, {"gdp_cutedsl_kernel", "false"},
      {"gdp_num_chunk_states_to_recompute", "2"}, {"gdp_num_householder", "3"}, {"glu_linear_offset", "0.0"},
      {"gtp_remat_opt_in_modules", "[]"}, {"gtp_weight_remat_size", "1"}, {"heterogeneous_block_specs", "false"},
      {"hierarchical_context_parallel_sizes", "null"}, {"high_priority_a2a_comm_stream", "false"},
      {"hybrid_context_parallel", "false"}, {"is_hybrid_model", "false"}, {"kitchen_attention_backend", "sdpa"},
      {"linear_attention_freq", "null"}, {"linear_conv_kernel_dim", "4"}, {"linear_key_head_dim", "128"},
      {"linear_num_key_heads", "16"}, {"linear_num_value_heads", "32"}, {"linear_value_head_dim", "128"},
      {"mamba_head_dim", "64"}, {"mamba_num_groups", "8"}, {"mamba_num_heads", "null"},
      {"mamba_state_dim", "128"}, {"mamba_training_ssm_states_dtype", "null"},
      {"max_seqlen_per_dp_cp_rank", "null"}, {"mhc_init_gating_factor", "0.01"},
      {"mhc_num_residual_streams", "4"}, {"mhc_recompute_layer_num", "null"}, {"mhc_sinkhorn_iterations", "20"},
      {"microbatch_group_size_per_vp_stage", "null"}, {"min_offloaded_tensor_size", "1048576"},
      {"mla_down_proj_fusion", "false"}, {"mlp_chunks_for_training", "1"}, {"moe_apply_probs_on_input", "false"},
      {"moe_combine_bwd_dtype", "bf16"}, {"moe_dispatch_fwd_dtype", "bf16"},
      {"moe_expert_rank_capacity_factor", "null"}, {"moe_hybridep_num_blocks_permute", "null"},
      {"moe_hybridep_num_blocks_unpermute", "null"}, {"moe_hybridep_num_sms_preprocessing", "108"},
      {"moe_hybridep_pad_uneven_dispatch_inputs", "false"}, {"moe_latent_size", "null"},
      {"moe_layer_recompute", "false"}, {"moe_mlp_glu_interleave_size", "null"},
      {"moe_ncclep_zero_copy", "false"}, {"moe_pad_expert_input_to_capacity", "false"},
      {"moe_paged_stash", "false"}, {"moe_paged_stash_buffer_size_factor_cpu", "0.0"},
      {"moe_paged_stash_buffer_size_factor_cuda", "1.1"}, {"moe_paged_stash_page_size", "64"},
      {"moe_permute_fusion_into_hybridep", "false"}, {"moe_shared_expert_gate", "false"},
      {"moe_shared_expert_glu_interleave_size", "null"}, {"moe_shared_expert_overlap", "false"},
      {"moe_single_grouped_bias", "false"}, {"moe_single_grouped_weight", "false"},
      {"moe_token_dropping", "false"}, {"moe_use_grouped_tensor", "false"}, {"mrope_section", "null"},
      {"mtp_detach_heads", "false"}, {"mtp_hsm", "false"}, {"mtp_hybrid_override_pattern", "null"},
      {"mtp_standalone", "false"}, {"mtp_use_repeated_layer", "false"}, {"no_rope_freq", "null"},
      {"num_microbatches_with_partial_activation_checkpoints", "null"}, {"offload_modules", "[]"},
      {"overlap_dispatch_backward_with_experts_wgrad", "false"}, {"overlap_p2p_comm_warmup_flush", "false"},
      {"pipeline_model_parallel_comm_backend", "null"}, {"quant_recipe", "null"}, {"softmax_type", "vanilla"},
      {"symmetric_ar_type", "null"}, {"tensor_parallel_num_weight_shards", "null"},
      {"use_fused_weighted_squared_relu", "false"}, {"use_grouped_gemm_for_dense_mlp", "false"},
      {"use_grouped_gemm_for_shared_expert", "false"}, {"use_kitchen", "false"},
      {"use_kitchen_attention", "false"}, {"use_mamba_mem_eff_path", "true"}, {"use_ring_exchange_p2p", "false"},
      {"use_te_activation_func", "false"},
      {"wgrad_deferral_limit", "0"}
  };
}

SectionTable model_table() {
  // Megatron-LM's importer ignores the router's settings but top-k, fusion and forced balancing
  // (moe-router-*) as well; muP and inference settings do not change a training step.
  return {model_mapped(), model_ignored(), model_known(), false, {"moe_router_", "yarn_", "mup_", "use_mup", "inference_"}};
}

// The training loop, DDP and optimizer sections.
std::map<std::string, SectionTable> training_tables() {
  return {
      {"train",
       {{"micro_batch_size", "global_batch_size", "train_iters", "train_samples", "rampup_batch_size"},
        {"_target_", "exit_interval", "exit_duration_in_mins", "exit_signal_handler", "exit_signal",
         "exit_signal_handler_for_dataloader", "exit_signal_handler_for_training", "manual_gc", "manual_gc_interval",
         "manual_gc_eval", "eval_iters", "eval_interval", "skip_train",
         "check_weight_hash_across_dp_replicas_interval", "gpu_sniff_test_interval", "train_sync_interval",
         "num_epochs", "check_optimizer_step_success", "skip_sync_grad_norm_across_mp", "iterations_to_skip",
         "decrease_batch_size_if_needed"},
        {{"empty_unused_memory_level", "0"}, {"step_batch_size_schedule", "null"}},
        false,
        {}}},
      {"ddp",
       {{"use_distributed_optimizer", "overlap_grad_reduce", "overlap_param_gather", "grad_reduce_in_fp32",
         "use_megatron_fsdp", "use_custom_fsdp", "data_parallel_sharding_strategy"},
        {"_target_", "check_for_nan_in_grad", "check_for_large_grads", "average_in_collective",
         "param_name_patterns_for_fp32_local_accumulation", "gradient_reduce_div_fusion",
         "fsdp_db_use_persist_buf_on_alloc_fail", "megatron_fsdp_use_decoupled_grad"},
        {{"align_param_gather", "false"},
         {"num_distributed_optimizer_instances", "1"}, {"bucket_size", "null"}, {"num_buckets", "null"},
         {"pad_buckets_for_high_nccl_busbw", "false"}, {"reduce_scatter_with_fp32_accumulation", "false"},
         {"fp8_param_gather", "false"}, {"fp4_param_gather", "false"},
         {"reuse_grad_buf_for_mxfp8_param_ag", "false"}, {"megatron_fsdp_version", "1"},
         {"suggested_communication_unit_size", "null"}, {"keep_fp8_transpose_cache", "false"},
         {"keep_fp8_transpose_cache_when_using_custom_fsdp", "false"}, {"preserve_fp32_weights", "true"},
         {"nccl_ub", "false"}, {"fsdp_double_buffer", "false"}, {"fsdp_all_gather_in_start_param_sync", "true"},
         {"outer_dp_sharding_strategy", "no_shard"}, {"disable_symmetric_registration", "false"},
         {"fsdp_manual_registration", "false"}, {"delay_wgrad_compute", "false"},
         {"megatron_fsdp_main_params_dtype", "float32"}, {"megatron_fsdp_main_grads_dtype", "null"},
         {"megatron_fsdp_grad_comm_dtype", "null"}, {"megatron_fsdp_cuda_graph_mode", "false"},
         {"megatron_fsdp_enable_fine_grained_param_gather", "false"},
         {"megatron_fsdp_max_pool_double_buffer", "false"}},
        false,
        {}}},
      {"optimizer",
       {{},
        {"_target_", "lr", "min_lr", "decoupled_lr", "decoupled_min_lr", "weight_decay", "apply_wd_to_qk_layernorm",
         "fp8_recipe", "fp16", "bf16", "params_dtype", "optimizer", "loss_scale", "initial_loss_scale",
         "min_loss_scale", "loss_scale_window", "hysteresis", "adam_beta1", "adam_beta2", "adam_eps",
         "decoupled_weight_decay", "sgd_momentum", "use_distributed_optimizer", "overlap_param_gather", "clip_grad",
         "grad_norm_skip_threshold", "log_num_zeros_in_grad", "barrier_with_L1_time", "timers", "config_logger_dir",
         "store_param_remainders", "reuse_grad_buf_for_mxfp8_param_ag"},
        {{"use_precision_aware_optimizer", "false"},
         {"main_grads_dtype", "float32"}, {"main_params_dtype", "float32"}, {"exp_avg_dtype", "float32"},
         {"exp_avg_sq_dtype", "float32"}, {"use_layer_wise_distributed_optimizer", "false"},
         {"overlap_param_gather_with_optimizer_step", "false"}, {"optimizer_cpu_offload", "false"},
         {"optimizer_offload_fraction", "0.0"}, {"use_torch_optimizer_for_cpu_offload", "false"},
         {"overlap_cpu_optimizer_d2h_h2d", "false"}, {"pin_cpu_grads", "true"}, {"pin_cpu_params", "true"},
         {"optimizer_cuda_graph", "false"}},
        false,
        {"muon_", "lion_", "soap_", "adaptive_muon_"}}},
  };
}

// The data, tokenizer, distributed-init, precision, overlap and tensor-inspection sections.
std::map<std::string, SectionTable> setup_tables() {
  return {
      {"dataset", {{"seq_length", "sequence_length"}, {}, {{"packed_sequence_specs", "null"}}, true, {}}},
      {"tokenizer", {{"vocab_size", "tokenizer_model", "tokenizer_type"}, {}, {}, true, {}}},
      {"dist",
       {{"use_megatron_fsdp", "use_torch_fsdp2"},
        {"_target_", "distributed_backend", "distributed_timeout_minutes", "align_grad_reduce", "local_rank",
         "lazy_mpu_init", "lazy_init", "use_gloo_process_groups", "enable_megatron_core_experimental",
         "external_gpu_device_mapping", "use_decentralized_pg", "eval_context_parallel_size",
         "distributed_timeout_seconds_after_init", "disable_jit_fuser"},
        {{"nccl_communicator_config_path", "null"},
         {"use_tp_pp_dp_mapping", "false"}, {"use_sharp", "false"}, {"sharp_enabled_group", "null"},
         {"high_priority_stream_groups", "[]"}},
        false,
        {"flight_recorder_"}}},
      {"mixed_precision",
       {{"fp32", "fp16", "bf16", "fp8", "fp8_recipe", "fp4", "fp4_recipe", "first_last_layers_bf16",
         "num_layers_at_start_in_bf16", "num_layers_at_end_in_bf16", "grad_reduce_in_fp32"},
        {"_target_", "_call_", "params_dtype", "pipeline_dtype", "autocast_dtype", "autocast_enabled", "fp8_margin",
         "fp8_amax_history_len", "fp8_amax_compute_algo", "loss_scale", "initial_loss_scale", "min_loss_scale",
         "loss_scale_window", "hysteresis"},
        {{"fp8_wgrad", "true"},
         {"fp8_dot_product_attention", "false"}, {"fp8_multi_head_attention", "false"}, {"fp8_param", "null"},
         {"fp8_param_gather", "false"}, {"fp4_param", "null"}, {"fp4_param_gather", "false"},
         {"reuse_grad_buf_for_mxfp8_param_ag", "false"}},
        false,
        {}}},
      {"comm_overlap",
       {{"tp_comm_overlap", "overlap_p2p_comm", "overlap_grad_reduce", "overlap_param_gather",
         "overlap_moe_expert_parallel_comm", "data_parallel_size"},
        {"_target_", "tp_comm_overlap_cfg", "tp_comm_bootstrap_backend", "batch_p2p_comm"},
        {{"overlap_param_gather_with_optimizer_step", "null"},
         {"align_param_gather", "null"}, {"bucket_size", "null"}, {"defer_embedding_wgrad_compute", "null"},
         {"wgrad_deferral_limit", "null"},
         {"delay_wgrad_compute", "null"}},
        false,
        {}}},
      {"tensor_inspect", {{}, {"_target_"}, {{"enabled", "false"}}, true, {}}},
  };
}
// clang-format on

const std::map<std::string, SectionTable>& section_tables() {
  static const std::map<std::string, SectionTable> tables = [] {
    std::map<std::string, SectionTable> t = training_tables();
    t.merge(setup_tables());
    t.emplace("model", model_table());
    return t;
  }();
  return tables;
}

}  // namespace

const FieldInfo* field_info(const std::string& path) {
  static const FieldInfo kMapped{FieldUse::mapped}, kIgnored{FieldUse::ignored};
  static std::map<std::string, FieldInfo> known;  // built once: a FieldInfo per known field
  static const bool built = [] {
    for (const auto& [section, t] : section_tables())
      for (const auto& [field, value] : t.known) known[section + "." + field] = {FieldUse::known, value.c_str()};
    return true;
  }();
  (void)built;
  const std::size_t dot = path.find('.');
  if (dot == std::string::npos) return nullptr;
  auto t = section_tables().find(path.substr(0, dot));
  if (t == section_tables().end()) return nullptr;
  const std::string field = path.substr(dot + 1);
  if (t->second.mapped.count(field)) return &kMapped;
  if (t->second.ignored.count(field)) return &kIgnored;
  if (auto k = known.find(path); k != known.end()) return &k->second;
  for (const auto& p : t->second.ignored_prefixes)
    if (field.rfind(p, 0) == 0) return &kIgnored;  // (mapped fields were answered above: moe_router_topk, …)
  return t->second.others_ignored ? &kIgnored : nullptr;
}

bool is_read_section(const std::string& section) {
  return section_tables().count(section) > 0 || section == "peft" || section == "env_vars";
}

bool is_ignored_section(const std::string& section) {
  static const std::set<std::string> kIgnoredSections = {"_target_",
                                                         "rng",
                                                         "rerun_state_machine",
                                                         "scheduler",
                                                         "logger",
                                                         "checkpoint",
                                                         "validation",
                                                         "ft",
                                                         "straggler",
                                                         "nvrx_straggler",
                                                         "profiling",
                                                         "inprocess_restart",
                                                         "optimizer_config_override_provider"};
  return kIgnoredSections.count(section) > 0;
}

namespace {

// training/mixed_precision.py: each recipe's fields (bf16_mixed() or fp16_mixed(), then its own).
const std::map<std::string, std::string>& precision_recipes() {
  static const std::map<std::string, std::string> recipes = {
      {"bf16_mixed", "{bf16: true, grad_reduce_in_fp32: true}"},
      {"fp16_mixed", "{fp16: true, grad_reduce_in_fp32: false}"},
      {"bf16_with_fp8_delayed_scaling_mixed",
       "{bf16: true, grad_reduce_in_fp32: true, fp8: hybrid, fp8_recipe: delayed, fp8_param_gather: true}"},
      {"fp16_with_fp8_delayed_scaling_mixed",
       "{fp16: true, grad_reduce_in_fp32: false, fp8: hybrid, fp8_recipe: delayed, fp8_param_gather: true}"},
      {"bf16_with_mxfp8_mixed",
       "{bf16: true, grad_reduce_in_fp32: true, fp8: e4m3, fp8_recipe: mxfp8, fp8_param_gather: true, "
       "reuse_grad_buf_for_mxfp8_param_ag: true}"},
      {"fp16_with_mxfp8_mixed",
       "{fp16: true, grad_reduce_in_fp32: false, fp8: e4m3, fp8_recipe: mxfp8, fp8_param_gather: true, "
       "reuse_grad_buf_for_mxfp8_param_ag: true}"},
      {"bf16_with_fp8_current_scaling_mixed",
       "{bf16: true, grad_reduce_in_fp32: true, fp8: hybrid, fp8_recipe: tensorwise, first_last_layers_bf16: true, "
       "num_layers_at_start_in_bf16: 1, num_layers_at_end_in_bf16: 1, fp8_param_gather: true}"},
      {"nemotron_h_bf16_with_fp8_current_scaling_mixed",
       "{bf16: true, grad_reduce_in_fp32: true, fp8: hybrid, fp8_recipe: tensorwise, first_last_layers_bf16: true, "
       "num_layers_at_start_in_bf16: 2, num_layers_at_end_in_bf16: 2, fp8_param_gather: true}"},
      {"nanov2_bf16_with_fp8_current_scaling_mixed",
       "{bf16: true, grad_reduce_in_fp32: true, fp8: hybrid, fp8_recipe: blockwise, first_last_layers_bf16: true, "
       "num_layers_at_start_in_bf16: 2, num_layers_at_end_in_bf16: 2, fp8_param_gather: true}"},
      {"fp16_with_fp8_current_scaling_mixed",
       "{fp16: true, grad_reduce_in_fp32: false, fp8: hybrid, fp8_recipe: tensorwise, first_last_layers_bf16: true, "
       "num_layers_at_start_in_bf16: 1, num_layers_at_end_in_bf16: 1, fp8_param_gather: true}"},
      {"bf16_with_fp8_subchannel_scaling_mixed",
       "{bf16: true, grad_reduce_in_fp32: true, fp8: hybrid, fp8_recipe: blockwise, fp8_param_gather: false}"},
      {"fp16_with_fp8_subchannel_scaling_mixed",
       "{fp16: true, grad_reduce_in_fp32: false, fp8: hybrid, fp8_recipe: blockwise, fp8_param_gather: false}"},
      {"bf16_with_nvfp4_mixed",
       "{bf16: true, grad_reduce_in_fp32: true, fp4: e2m1, fp4_recipe: nvfp4, fp8_param_gather: false, "
       "fp4_param_gather: true}"},
      {"nemotron_3_super_bf16_with_nvfp4_mixed",
       "{bf16: true, grad_reduce_in_fp32: true, fp4: e2m1, fp4_recipe: nvfp4, fp8_param_gather: false, "
       "fp4_param_gather: true, first_last_layers_bf16: true, num_layers_at_end_in_bf16: 14}"},
  };
  return recipes;
}

}  // namespace

std::string mixed_precision_recipe(const std::string& name) {
  std::string key = name;
  std::replace(key.begin(), key.end(), '-', '_');
  auto it = precision_recipes().find(key);
  return it == precision_recipes().end() ? "" : it->second;
}

std::string mixed_precision_recipe_names() {
  std::string names;
  for (const auto& [name, fields] : precision_recipes()) names += (names.empty() ? "" : ", ") + name;
  return names;
}

std::string mixed_precision_default(const std::string& field) {
  // MixedPrecisionConfig's own defaults (not TransformerConfig's: fp8_recipe tensorwise, no BF16 layers).
  static const std::map<std::string, std::string> kDefaults = {{"fp32", "false"},
                                                               {"fp16", "false"},
                                                               {"bf16", "false"},
                                                               {"fp8", "null"},
                                                               {"fp8_recipe", "tensorwise"},
                                                               {"fp4", "null"},
                                                               {"fp4_recipe", "nvfp4"},
                                                               {"first_last_layers_bf16", "false"},
                                                               {"num_layers_at_start_in_bf16", "0"},
                                                               {"num_layers_at_end_in_bf16", "0"},
                                                               {"grad_reduce_in_fp32", "true"}};
  auto it = kDefaults.find(field);
  return it == kDefaults.end() ? "" : it->second;
}

}  // namespace clustersim::scenarios::importers::mbridge
