// The Megatron-Bridge importer: a ConfigContainer YAML (a run's run_config.yaml, or an override file
// merged onto its recipe) gives the scenario keys the equivalent Megatron-LM flags give, with
// Megatron-Bridge's own rules first (mixed_precision over the model's and DDP's precision fields,
// comm_overlap's overlaps, its dataclasses' defaults); what is not modelled is a warning naming the
// line, bookkeeping is not; errors name the file, line and field.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "scenarios/error.hpp"
#include "scenarios/import/importers.hpp"
#include "scenarios/load.hpp"
#include "support/import_fixture.hpp"

namespace {
namespace CLUSTERSIM_TEST_ID {

namespace im = clustersim::scenarios::importers;
using clustersim::scenarios::ScenarioError;

namespace {

std::string bridge_input(const std::string& name) { return clustersim::testing::import_input(name); }
std::string key(const im::Imported& i, const std::string& path) {
  return clustersim::testing::imported_key(i, path).value;
}
std::string origin(const im::Imported& i, const std::string& path) {
  return clustersim::testing::imported_key(i, path).origin;
}
bool warns(const im::Imported& i, const std::string& part) { return clustersim::testing::import_warned(i, part); }

im::ImportOptions bridge_opts(int gpus = 8, const std::string& recipe = "") {
  im::ImportOptions o;
  o.source = "run.yaml";
  o.gpus = gpus;
  o.hardware = "h100-sxm";
  o.recipe = recipe;
  return o;
}

// A small dense model the file states whole (no preset has its shape), with room for more fields.
std::string small_model(const std::string& more_model = "") {
  return "model:\n  num_layers: 4\n  hidden_size: 1024\n  num_attention_heads: 16\n  num_query_groups: 4\n"
         "  ffn_hidden_size: 4096\n  vocab_size: 32000\n  normalization: RMSNorm\n  activation_func: silu\n"
         "  gated_linear_unit: true\n  position_embedding_type: rope\n  add_bias_linear: false\n"
         "  hidden_dropout: 0.0\n  attention_dropout: 0.0\n" +
         more_model + "train:\n  micro_batch_size: 1\n  global_batch_size: 16\ndataset:\n  seq_length: 2048\n";
}

std::string error_of(const std::string& yaml, const im::ImportOptions& o = bridge_opts()) {
  try {
    (void)im::import_megatron_bridge(yaml, o);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  FAIL("no error for:\n" << yaml);
  return "";
}

}  // namespace

TEST_CASE(
    "megatron-bridge: a run_config.yaml (to_yaml's _target_ functions, dtypes, enums) gives its model, plan and "
    "training keys",
    "[import]") {
  const im::Imported i =
      im::import_megatron_bridge(bridge_input("llama3_70b_tp8pp4cp2_run_config.yaml"), bridge_opts(512));
  CHECK(key(i, "model") ==
        "llama3-70b");  // activation_func {_target_: torch.nn.functional.silu} with gated_linear_unit
  CHECK(key(i, "parallelism.tp") == "8");
  CHECK(origin(i, "parallelism.tp") == "model.tensor_model_parallel_size: 8 (line 95)");
  CHECK(key(i, "parallelism.pp") == "4");
  CHECK(key(i, "parallelism.cp") == "2");
  CHECK(key(i, "parallelism.sequence_parallel") == "true");
  CHECK(key(i, "parallelism.zero_stage") == "1");
  CHECK(key(i, "training.precision") == "bf16");
  CHECK(key(i, "training.grad_reduce_dtype") == "fp32");
  CHECK(key(i, "training.cross_entropy") == "fp32");  // fused, but the native impl upcasts the logits
  CHECK(key(i, "training.tokens") == "15000000004096");
  CHECK(warns(i, "attention implementation"));  // attention_backend {_name_: auto}: Transformer Engine chooses
  for (const char* quiet :
       {"checkpoint", "optimizer.lr", "rotary_base", "init_method_std", "logger", "scheduler", "tokenizer"}) {
    INFO(quiet);
    CHECK_FALSE(warns(i, quiet));  // bookkeeping and numerics: ignored without a word
  }
  // The same file with Megatron-Bridge's GPT model config nesting (model.transformer.*) reads the same.
  const im::Imported n =
      im::import_megatron_bridge(bridge_input("deepseek_v3_pp16ep64_override.yaml"), bridge_opts(1024));
  CHECK(key(n, "model") == "deepseek-v3");
  CHECK(key(n, "parallelism.pp_layers") == "[4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1]");
  CHECK(origin(n, "parallelism.pp_layers") == "model.transformer.num_layers_in_last_pipeline_stage: 1 (line 44)");
  CHECK(key(n, "training.moe_dispatcher") == "deepep");
  CHECK(key(n, "training.moe_a2a_overlap") == "true");
  CHECK(key(n, "training.precision") == "fp8");
  CHECK(key(n, "training.fp8_recipe") == "blockwise");
  CHECK(key(n, "training.recompute_modules") == "[layernorm, mla_up_proj, moe]");
}

TEST_CASE("megatron-bridge: mixed_precision recipes and fields overwrite the model's and DDP's precision", "[import]") {
  const im::Imported cs = im::import_megatron_bridge(
      small_model() + "mixed_precision: bf16_with_fp8_current_scaling_mixed\n", bridge_opts());
  CHECK(key(cs, "training.precision") == "fp8");
  CHECK(key(cs, "training.fp8_recipe") == "tensorwise");
  CHECK(key(cs, "training.bf16_layers") == "{first: 1, last: 1}");
  CHECK(origin(cs, "training.precision") ==
        "mixed_precision: bf16_with_fp8_current_scaling_mixed (line 20) (fp8 hybrid)");
  CHECK(warns(
      cs, "run.yaml:20: mixed_precision bf16_with_fp8_current_scaling_mixed's fp8_param_gather: true: not modelled"));
  CHECK(key(im::import_megatron_bridge(small_model() + "mixed_precision: bf16-with-mxfp8-mixed\n", bridge_opts()),
            "training.precision") == "mxfp8");
  CHECK(key(im::import_megatron_bridge(small_model() + "mixed_precision: bf16_with_nvfp4_mixed\n", bridge_opts()),
            "training.precision") == "nvfp4");
  // to_yaml's form of a recipe function.
  const im::Imported call = im::import_megatron_bridge(
      small_model() +
          "mixed_precision:\n  _target_: megatron.bridge.training.mixed_precision.bf16_mixed\n  _call_: true\n",
      bridge_opts());
  CHECK(key(call, "training.precision") == "bf16");
  // A mapping: MixedPrecisionConfig's defaults (fp8_recipe tensorwise, no BF16 layers), not TransformerConfig's.
  const im::Imported fields =
      im::import_megatron_bridge(small_model() + "mixed_precision:\n  bf16: true\n  fp8: hybrid\n", bridge_opts());
  CHECK(key(fields, "training.fp8_recipe") == "tensorwise");
  CHECK(fields.find("training.bf16_layers") == nullptr);
  // Without mixed_precision the model's own fields count, with TransformerConfig's delayed scaling.
  const im::Imported model = im::import_megatron_bridge(small_model("  bf16: true\n  fp8: hybrid\n"), bridge_opts());
  CHECK(key(model, "training.fp8_recipe") == "delayed");
  CHECK(key(model, "training.grad_reduce_dtype") ==
        "bf16");  // DistributedDataParallelConfig: grad_reduce_in_fp32 false
  // The file's DDP or model value that mixed_precision overwrites is said, not silently lost.
  const im::Imported over = im::import_megatron_bridge(
      small_model() + "mixed_precision: bf16_mixed\nddp:\n  grad_reduce_in_fp32: false\n", bridge_opts());
  CHECK(key(over, "training.grad_reduce_dtype") == "fp32");
  CHECK(warns(
      over, "run.yaml:22: ddp.grad_reduce_in_fp32: false: overwritten by mixed_precision's grad_reduce_in_fp32 true"));
  const im::Imported fp32 = im::import_megatron_bridge(small_model(), bridge_opts());
  CHECK(key(fp32, "training.precision") == "fp32");
  CHECK(warns(fp32, "imported as fp32 training"));
  CHECK_THAT(
      error_of(small_model() + "mixed_precision: bf17_mixed\n"),
      Catch::Contains(
          "run.yaml:20: mixed_precision: 'bf17_mixed': not a mixed-precision recipe of Megatron-Bridge; allowed: "));
}

TEST_CASE(
    "megatron-bridge: comm_overlap decides the P2P, TP, EP and data-parallel overlaps as CommOverlapConfig.setup does",
    "[import]") {
  const std::string plan =
      "  tensor_model_parallel_size: 2\n  sequence_parallel: true\n  pipeline_model_parallel_size: 2\n"
      "  virtual_pipeline_model_parallel_size: 2\n";
  // No comm_overlap: the model's own fields, Megatron-Core's defaults (no P2P overlap even when interleaved).
  const im::Imported none =
      im::import_megatron_bridge(small_model(plan) + "ddp:\n  use_distributed_optimizer: true\n", bridge_opts(16));
  CHECK(key(none, "parallelism.pp_comm_overlap") == "false");
  CHECK(key(none, "parallelism.tp_comm_overlap") == "false");
  CHECK(key(none, "training.overlap_grad_reduce") == "false");
  // comm_overlap: P2P overlap for the interleaved schedule, TP overlap as asked (TP 2 with SP), DP overlaps with dp
  // > 1.
  const im::Imported on = im::import_megatron_bridge(
      small_model(plan) + "ddp:\n  use_distributed_optimizer: true\ncomm_overlap:\n  tp_comm_overlap: true\n",
      bridge_opts(16));
  CHECK(key(on, "parallelism.pp_comm_overlap") == "true");
  CHECK(key(on, "parallelism.tp_comm_overlap") == "true");
  CHECK(key(on, "training.overlap_grad_reduce") == "true");
  CHECK(
      origin(on, "training.overlap_grad_reduce") ==
      "comm_overlap: {tp_comm_overlap: true} (line 26): comm_overlap's overlap_grad_reduce on (data-parallel size 4)");
  // It turns TP overlap off without sequence parallelism, and the model's EP overlap off unless it says so.
  const im::Imported off = im::import_megatron_bridge(
      small_model("  tensor_model_parallel_size: 2\n  num_moe_experts: 8\n  expert_model_parallel_size: 2\n"
                  "  moe_token_dispatcher_type: alltoall\n  overlap_moe_expert_parallel_comm: true\n") +
          "comm_overlap:\n  tp_comm_overlap: true\n",
      bridge_opts(8));
  CHECK(key(off, "parallelism.tp_comm_overlap") == "false");
  CHECK(origin(off, "parallelism.tp_comm_overlap").find("sequence_parallel false") != std::string::npos);
  CHECK(key(off, "training.moe_a2a_overlap") == "false");
  CHECK(warns(off, "model.overlap_moe_expert_parallel_comm: true is overwritten by comm_overlap"));
}

TEST_CASE("megatron-bridge: Megatron-FSDP, a layout of stages, GeGLU and a model that is no preset", "[import]") {
  const im::Imported fsdp =
      im::import_megatron_bridge(small_model() +
                                     "mixed_precision: bf16_mixed\ndist:\n  use_megatron_fsdp: true\nddp:\n  "
                                     "data_parallel_sharding_strategy: optim_grads_params\n",
                                 bridge_opts());
  CHECK(key(fsdp, "parallelism.zero_stage") == "3");
  CHECK(origin(fsdp, "parallelism.zero_stage") ==
        "FSDP with ddp.data_parallel_sharding_strategy: optim_grads_params (line 24)");
  const im::Imported l =
      im::import_megatron_bridge(small_model("  pipeline_model_parallel_size: 2\n  pipeline_model_parallel_layout: "
                                             "[[embedding, decoder], [decoder, decoder, decoder, loss]]\n"
                                             "  activation_func: gelu\n") +
                                     "mixed_precision: bf16_mixed\n",
                                 bridge_opts());
  CHECK(key(l, "parallelism.pp_layers") == "[1, 3]");
  CHECK(key(l, "model.activation") == "geglu");  // gelu with gated_linear_unit
  CHECK(key(l, "model.layers") == "4");          // no preset has this shape: the model section is written
  CHECK(key(l, "model.kv_heads") == "4");
  CHECK(origin(l, "model.kv_heads") == "model.num_query_groups: 4 (line 5)");
  (void)clustersim::scenarios::load_scenario_string(im::to_yaml(l, {}), "l.yaml");
}

TEST_CASE("megatron-bridge: an override file is merged onto its recipe, and the recipe's layout follows the pipeline",
          "[import]") {
  const std::string file =
      "model:\n  pipeline_model_parallel_size: 8\n  expert_model_parallel_size: 32\ntrain:\n  global_batch_size: "
      "1024\n";
  const im::Imported i = im::import_megatron_bridge(file, bridge_opts(512, "deepseek_v3_pretrain_config"));
  CHECK(key(i, "model") == "deepseek-v3");
  CHECK(key(i, "parallelism.tp") == "2");  // the recipe's
  CHECK(origin(i, "parallelism.tp") == "recipe deepseek_v3_pretrain_config: model.tensor_model_parallel_size 2");
  CHECK(key(i, "parallelism.pp") == "8");                                // the file's
  CHECK(key(i, "parallelism.pp_layers") == "[8, 8, 8, 8, 8, 8, 8, 5]");  // model_config()'s layout for pp 8
  CHECK(key(i, "training.global_batch") == "1024");
  CHECK(warns(i, "the file is merged onto recipe deepseek_v3_pretrain_config"));
  CHECK(warns(i, "recipe deepseek_v3_pretrain_config: model.moe_shared_expert_overlap: true: not modelled"));
  CHECK_THAT(
      error_of("model:\n  pipeline_model_parallel_size: 3\n", bridge_opts(512, "deepseek_v3_pretrain_config")),
      Catch::Contains(
          "recipe deepseek_v3_pretrain_config picks its pipeline layout from pp and vpp and has none for pp 3, vpp 1"));
  CHECK_THAT(error_of("train:\n  global_batch_size: 8\n"),
             Catch::Contains("run.yaml: model.num_layers is not in the file"));
  CHECK_THAT(error_of("train:\n  global_batch_size: 8\n"), Catch::Contains("--recipe (llama32_1b_pretrain_config"));
}

TEST_CASE("megatron-bridge: what changes a step but is not modelled is a warning naming the line, bookkeeping is not",
          "[import]") {
  const im::Imported i =
      im::import_megatron_bridge(small_model("  moe_shared_expert_overlap: false\n  deterministic_mode: true\n  "
                                             "shiny_new_knob: 3\n  init_method_std: 0.02\n") +
                                     "mixed_precision: bf16_mixed\nperf_matrix:\n  h100: {}\nenv_vars:\n  NCCL_ALGO: "
                                     "Ring\npeft:\n  _target_: megatron.bridge.peft.lora.LoRA\n"
                                     "optimizer:\n  lr: 0.0003\n  optimizer_cpu_offload: true\ncheckpoint:\n  save: "
                                     "/ckpt\nlogger:\n  log_interval: 1\n"
                                     "rng:\n  seed: 7\nddp:\n  nccl_ub: true\n",
                                 bridge_opts());
  CHECK(warns(i, "run.yaml:16: model.deterministic_mode: true: not modelled, ignored"));
  CHECK(warns(i, "run.yaml:17: model.shiny_new_knob: 3: not a field the importer knows"));
  CHECK(warns(i, "run.yaml:25: perf_matrix: not a section of Megatron-Bridge's ConfigContainer"));
  CHECK(warns(i, "run.yaml:28: env_vars.NCCL_ALGO: Ring: an environment variable, not modelled"));
  CHECK(warns(i, "run.yaml:29: peft: LoRA: parameter-efficient fine-tuning is not modelled"));
  CHECK(warns(i, "run.yaml:33: optimizer.optimizer_cpu_offload: true: not modelled"));
  CHECK(warns(i, "ddp.nccl_ub: true: not modelled"));
  for (const char* quiet :
       {"moe_shared_expert_overlap", "init_method_std", "optimizer.lr", "checkpoint", "logger", "rng"}) {
    INFO(quiet);
    CHECK_FALSE(warns(i, quiet));  // a default, or bookkeeping
  }
}

TEST_CASE("megatron-bridge: errors name the file, line and field", "[import]") {
  CHECK_THAT(error_of("model: [1, 2\n"), Catch::Contains("run.yaml:2:1: not YAML:"));
  CHECK(
      error_of("- model\n- train\n") ==
      "run.yaml:1: expected a mapping of ConfigContainer sections (model:, train:, mixed_precision:, …), found a list");
  CHECK(error_of("model: 5\n") == "run.yaml:1: model: expected a mapping of its fields, found a scalar ('5')");
  CHECK(error_of(small_model("  tensor_model_parallel_size: two\n")) ==
        "run.yaml:15: model.tensor_model_parallel_size: expected an integer, found 'two'");
  CHECK(error_of(small_model("  sequence_parallel: maybe\n")) ==
        "run.yaml:15: model.sequence_parallel: expected true or false, found 'maybe'");
  CHECK(error_of(small_model("  recompute_granularity: banana\n")) ==
        "run.yaml:15: model.recompute_granularity: 'banana': expected one of full, selective");
  CHECK(error_of(small_model("  seq_length: 4096\n")) ==
        "run.yaml:15: model.seq_length 4096 differs from run.yaml:20: dataset.seq_length 2048: Megatron-Bridge "
        "requires them equal "
        "(ConfigContainer.validate)");
  CHECK_THAT(error_of(small_model(), bridge_opts(0)),
             Catch::Contains("give it with `clustersim import megatron-bridge --gpus N`"));
  im::ImportOptions bad = bridge_opts();
  bad.recipe = "llama4_pretrain_config";
  CHECK_THAT(error_of(small_model(), bad),
             Catch::Contains("--recipe llama4_pretrain_config: not a recipe the importer knows; known: "));
}

}  // namespace CLUSTERSIM_TEST_ID
}  // namespace
