// Megatron-LM arguments -> the training section of a scenario.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "scenarios/error.hpp"
#include "scenarios/import/flag_map.hpp"
#include "scenarios/import/importers.hpp"
#include "scenarios/import/megatron_mapping.hpp"

namespace clustersim::scenarios::importers {
namespace {

using fmt::format;

long long required(const FlagMap& f, const std::string& name) {
  auto v = f.integer(name);
  if (!v || *v < 1) throw ScenarioError(format("{}: --{} is required and must be positive", f.source(), name));
  return *v;
}

// --bf16 / --fp16, and the FP8 / FP4 recipes of Transformer Engine (--fp8-format, --fp8-recipe, --fp4-format).
void import_precision(Imported& out, const FlagMap& f) {
  if (f.has("fp4-format")) {
    out.set("training.precision", "nvfp4", f.origin("fp4-format"));
    return;
  }
  if (f.has("fp8-format")) {
    const std::string recipe = f.text("fp8-recipe").value_or("delayed");  // Megatron default: delayed scaling
    if (recipe == "mxfp8") {
      out.set("training.precision", "mxfp8", f.origins({"fp8-format", "fp8-recipe"}));
      return;
    }
    if (recipe != "delayed" && recipe != "tensorwise" && recipe != "blockwise")
      throw ScenarioError(
          format("{} {}: expected delayed, tensorwise, mxfp8 or blockwise", f.where("fp8-recipe"), recipe));
    out.set("training.precision", "fp8", f.origin("fp8-format"));
    out.set("training.fp8_recipe", recipe, f.origin_or("fp8-recipe", "Megatron default: --fp8-recipe delayed"));
    return;
  }
  if (f.has("bf16")) out.set("training.precision", "bf16", f.origin("bf16"));
  else if (f.has("fp16")) out.set("training.precision", "fp16", f.origin("fp16"));
  else {
    out.set("training.precision", "fp32", f.origin_or("bf16", "neither --bf16 nor --fp16: Megatron trains in fp32"));
    if (f.origin_or("bf16", "").empty())
      out.warn("no --bf16 or --fp16: imported as fp32 training (is a flag missing?)");
  }
}

void import_recompute(Imported& out, const FlagMap& f, long long layers) {
  const std::string gran = f.text("recompute-granularity").value_or(f.has("recompute-activations") ? "selective" : "");
  if (gran.empty()) {
    out.set("training.recompute", "none", f.origin_or("recompute-granularity", "no --recompute-granularity"));
    return;
  }
  if (gran != "full" && gran != "selective")
    throw ScenarioError(format("{} {}: expected full or selective", f.where("recompute-granularity"), gran));
  out.set("training.recompute", gran, f.origin_or("recompute-granularity", "--recompute-activations"));
  if (auto modules = f.text("recompute-modules"); modules && gran == "selective") {
    std::vector<std::string> names;
    for (std::size_t at = 0; at < modules->size();) {
      const std::size_t next = std::min(modules->find_first_of(" ,", at), modules->size());
      if (next > at) names.push_back(modules->substr(at, next - at));
      at = next + 1;
    }
    out.set("training.recompute_modules", format("[{}]", fmt::join(names, ", ")), f.origin("recompute-modules"));
  }
  // --recompute-method block: the first N layers of each model chunk are recomputed, the rest
  // not (TransformerBlock._checkpointed_forward); N at least a chunk's layers is every layer.
  if (gran == "full" && f.text("recompute-method").value_or("") == "block") {
    const long long n = f.integer("recompute-num-layers").value_or(layers);
    if (n < most_chunk_layers(out, layers))
      out.set("training.recompute_layers", format("{}", n), f.origins({"recompute-method", "recompute-num-layers"}));
  }
}

// --cpu-offloading: the first --cpu-offloading-num-layers (default 0) layers offload their
// activations to host memory (Megatron-Core TransformerConfig cpu_offloading_num_layers).
void import_offload(Imported& out, const FlagMap& f) {
  if (!f.has("cpu-offloading")) return;
  const long long n = f.integer("cpu-offloading-num-layers").value_or(0);
  if (n > 0) out.set("training.activation_offload_layers", format("{}", n), f.origin("cpu-offloading-num-layers"));
  else out.warn("--cpu-offloading without --cpu-offloading-num-layers: Megatron's default of 0 layers offloads none");
}

// --activation-func-fp8-input-store: SwiGLU inputs saved in FP8 (fused_bias_swiglu.py). Under
// --recompute-modules moe_act Megatron-Core's checkpoint (CheckpointWithoutOutput) keeps the
// experts' BF16 fc1 output as its argument, so the flag saves nothing there: not imported then.
void import_fp8_input_store(Imported& out, const FlagMap& f) {
  if (!f.has("activation-func-fp8-input-store")) return;
  const std::string modules = f.text("recompute-modules").value_or("");
  if (f.text("recompute-granularity").value_or("") == "selective" && modules.find("moe_act") != std::string::npos) {
    out.warn(
        "--activation-func-fp8-input-store with --recompute-modules moe_act: Megatron-Core's moe_act checkpoint "
        "keeps the BF16 expert activations as its input, so not imported (training.activation_fp8_input_store "
        "stays false)");
    return;
  }
  out.set("training.activation_fp8_input_store", "true", f.origin("activation-func-fp8-input-store"));
}

// --first-last-layers-bf16: the first --num-layers-at-start-in-bf16 and the last
// --num-layers-at-end-in-bf16 blocks (Megatron-Core's defaults 1 and 1, TransformerConfig) stay
// outside the FP8/FP4 autocast. Without --fp8-format / --fp4-format the flag changes nothing.
void import_bf16_layers(Imported& out, const FlagMap& f) {
  if (!f.has("first-last-layers-bf16")) return;
  if (!f.has("fp8-format") && !f.has("fp4-format")) {
    out.warn("--first-last-layers-bf16 without --fp8-format or --fp4-format: every block is BF16 already");
    return;
  }
  const long long first = f.integer("num-layers-at-start-in-bf16").value_or(1);
  const long long last = f.integer("num-layers-at-end-in-bf16").value_or(1);
  out.set("training.bf16_layers", format("{{first: {}, last: {}}}", first, last),
          format("{} {} {}", f.origin("first-last-layers-bf16"),
                 f.origin_or("num-layers-at-start-in-bf16", "--num-layers-at-start-in-bf16 " + std::to_string(first)),
                 f.origin_or("num-layers-at-end-in-bf16", "--num-layers-at-end-in-bf16 " + std::to_string(last))));
}

// --te-precision-config-file: a quantization recipe (Transformer Engine configs matched by
// module name) that the importer does not read; its modules map to training.module_precision.
void import_quant_recipe(Imported& out, const FlagMap& f) {
  if (!f.has("te-precision-config-file")) return;
  out.warn(
      format("--te-precision-config-file {}: not read; set training.module_precision for the modules it moves "
             "(attention_linears, moe_latent_proj, mamba_out_proj, mtp)",
             f.text("te-precision-config-file").value_or("")));
}

// --cross-entropy-loss-fusion with --cross-entropy-fusion-impl te: Transformer Engine's
// parallel_cross_entropy on the BF16 logits; the default impl (native) and the unfused loss run
// VocabParallelCrossEntropy, which upcasts the logits to FP32 (calculate_logits_max).
void import_cross_entropy(Imported& out, const FlagMap& f) {
  const std::string impl = f.text("cross-entropy-fusion-impl").value_or("native");
  if (f.has("cross-entropy-loss-fusion") && impl == "te")
    out.set("training.cross_entropy", "fused", f.origins({"cross-entropy-loss-fusion", "cross-entropy-fusion-impl"}));
  else
    out.set("training.cross_entropy", "fp32",
            f.has("cross-entropy-loss-fusion")
                ? f.origin("cross-entropy-loss-fusion") + " (impl native: FP32 logits)"
                : f.origin_or("cross-entropy-loss-fusion", "Megatron default: unfused loss on FP32 logits"));
}

void import_kernels(Imported& out, const FlagMap& f) {
  const std::string backend = f.text("attention-backend").value_or("auto");
  if (f.has("use-flash-attn") && !f.has("attention-backend")) {
    out.set("training.attention_impl", "flash2", "--use-flash-attn (the flash-attn v2 package)");
  } else if (backend == "fused") {
    out.set("training.attention_impl", "cudnn",
            f.origin("attention-backend") + " (Transformer Engine's cuDNN attention)");
  } else if (backend == "unfused" || backend == "local") {
    out.set("training.attention_impl", "unfused", f.origin("attention-backend"));
  } else if (backend == "flash") {
    out.set("training.attention_impl", "flash2", f.origin("attention-backend") + " (flash-attn through Transformer Engine)");
  } else {
    out.warn("attention implementation: the hardware profile's default (Megatron's --attention-backend auto lets "
             "Transformer Engine choose)");
  }
  // --cuda-graph-impl transformer_engine with --cuda-graph-scope: partial graphs of those parts
  // (Megatron-LM guide "DeepSeek-V3 on GB200" §2.3); otherwise the whole step.
  const std::string impl = f.text("cuda-graph-impl").value_or("");
  auto scope = f.text("cuda-graph-scope");
  if (impl == "none") return;
  if (scope && !scope->empty() && (impl.empty() || impl == "transformer_engine")) {
    std::vector<std::string> names;
    for (std::size_t at = 0; at < scope->size();) {
      const std::size_t next = std::min(scope->find_first_of(" ,", at), scope->size());
      if (next > at) names.push_back(scope->substr(at, next - at));
      at = next + 1;
    }
    out.set("training.cuda_graph_scope", format("[{}]", fmt::join(names, ", ")), f.origin("cuda-graph-scope"));
  } else if (f.has("enable-cuda-graph") || f.has("external-cuda-graph") || f.has("cuda-graph-impl")) {
    const char* g = f.has("enable-cuda-graph")     ? "enable-cuda-graph"
                    : f.has("external-cuda-graph") ? "external-cuda-graph"
                                                   : "cuda-graph-impl";
    out.set("training.cuda_graphs", "true",
            f.translated(g) ? f.origin(g) : "--enable-cuda-graph / --external-cuda-graph");
  }
}

// MoE token exchange: TransformerConfig's moe_token_dispatcher_type (default allgather) and the flex
// dispatcher's backend (default deepep; hybridep is NVIDIA's DeepEP successor for NVLink domains).
void import_moe_training(Imported& out, const FlagMap& f) {
  if (!f.has("num-experts")) return;
  const std::string d = f.text("moe-token-dispatcher-type").value_or("allgather");
  const std::string backend = f.has("moe-enable-deepep") ? "deepep" : f.text("moe-flex-dispatcher-backend").value_or("deepep");
  const char* mapped = d == "allgather"        ? "allgather"
                       : d == "alltoall"       ? "alltoall"
                       : backend == "hybridep" ? "hybridep"
                                               : "deepep";
  if (d != "allgather" && d != "alltoall" && d != "flex")
    throw ScenarioError(format("{} {}: expected allgather, alltoall or flex", f.where("moe-token-dispatcher-type"), d));
  if (d == "flex" && backend != "deepep" && backend != "hybridep")
    out.warn(format("{} {}: modelled as DeepEP's kernels", f.label("moe-flex-dispatcher-backend"), backend));
  out.set("training.moe_dispatcher", mapped,
          f.has("moe-token-dispatcher-type") ? f.origin("moe-token-dispatcher-type") + (d == "flex" ? " (backend " + backend + ")" : "")
                                             : "Megatron default: --moe-token-dispatcher-type allgather");
  // The SMs of the flex backend's kernels: Megatron-Core's unified --moe-flex-dispatcher-num-sms
  // (TransformerConfig moe_flex_dispatcher_num_sms, which takes precedence over the deprecated
  // per-backend knobs in __post_init__), else --moe-hybridep-num-sms for hybridep, --moe-deepep-num-sms.
  const char* sms_flag = f.has("moe-flex-dispatcher-num-sms") ? "moe-flex-dispatcher-num-sms"
                         : backend == "hybridep"              ? "moe-hybridep-num-sms"
                                                              : "moe-deepep-num-sms";
  if (d == "flex" && f.has(sms_flag)) out.set("training.moe_dispatcher_sms", *f.text(sms_flag), f.origin(sms_flag));
  // The two MoE keys that move a step most are written either way, so the scenario says them.
  if (f.has("moe-router-force-load-balancing"))
    out.set("training.moe_load_imbalance", "auto",
            f.origin("moe-router-force-load-balancing") +
                ": random router logits (Megatron-Core moe_utils.py RandomSTE), i.e. uniform random "
                "routing, whose busiest EP rank is the sampling floor auto computes");
  else
    out.set("training.moe_load_imbalance", "auto",
            f.origin_or("moe-router-force-load-balancing",
                        "Megatron default: real routing (no --moe-router-force-load-balancing)") +
                "; auto is its sampling floor, give the measured busiest-rank share for persistent expert skew");
  if (f.has("overlap-moe-expert-parallel-comm"))
    out.set("training.moe_a2a_overlap", "true", f.origin("overlap-moe-expert-parallel-comm"));
  else
    out.set(
        "training.moe_a2a_overlap", "false",
        f.origin_or("overlap-moe-expert-parallel-comm", "Megatron default (no --overlap-moe-expert-parallel-comm)"));
  for (const char* flag : {"moe-router-fusion", "moe-permute-fusion"})
    if (f.has(flag)) {
      std::string key = std::string("training.") + flag;
      for (char& c : key)
        if (c == '-') c = '_';
      out.set(key, "true", f.origin(flag));
    }
}

}  // namespace

void import_megatron_training(Imported& out, const FlagMap& f, long long gpus) {
  const long long seq = required(f, "seq-length"), micro = required(f, "micro-batch-size");
  const long long layers = f.integer("num-layers").value_or(0);
  out.set("training.seq_len", format("{}", seq), f.origin("seq-length"));
  out.set("training.micro_batch", format("{}", micro), f.origin("micro-batch-size"));
  const long long model_ranks = f.integer("tensor-model-parallel-size").value_or(1) *
                                f.integer("pipeline-model-parallel-size").value_or(1) *
                                f.integer("context-parallel-size").value_or(1);
  long long global = 0;
  if (auto g = f.integer("global-batch-size")) {
    global = *g;
    out.set("training.global_batch", format("{}", global), f.origin("global-batch-size"));
  } else {
    global = micro * (gpus / model_ranks);
    out.set("training.global_batch", format("{}", global),
            f.origin_or("global-batch-size", "Megatron default: micro-batch x data-parallel size"));
  }
  if (f.has("rampup-batch-size"))
    out.warn(format("{} {}: modelled at the final global batch", f.label("rampup-batch-size"),
                    *f.text("rampup-batch-size")));
  import_precision(out, f);
  import_recompute(out, f, layers);
  import_offload(out, f);
  import_fp8_input_store(out, f);
  import_bf16_layers(out, f);
  import_quant_recipe(out, f);
  import_cross_entropy(out, f);
  out.set("training.overlap_grad_reduce", f.has("overlap-grad-reduce") ? "true" : "false",
          f.origin_or("overlap-grad-reduce", "Megatron default: off"));
  out.set("training.overlap_param_gather", f.has("overlap-param-gather") ? "true" : "false",
          f.origin_or("overlap-param-gather", "Megatron default: off"));
  const bool bf16_reduce = f.has("grad-reduce-in-bf16");
  out.set("training.grad_reduce_dtype", bf16_reduce ? "bf16" : "fp32",
          f.origin_or("grad-reduce-in-bf16", "Megatron accumulates and reduces gradients in fp32 with --bf16"));
  import_kernels(out, f);
  import_moe_training(out, f);
  if (auto iters = f.integer("train-iters"))
    out.set("training.tokens", yaml_number(static_cast<double>(*iters) * global * seq), format("{} x global batch x seq length", f.origin("train-iters")));
  else if (auto samples = f.integer("train-samples"))
    out.set("training.tokens", yaml_number(static_cast<double>(*samples) * seq), format("{} x seq length", f.origin("train-samples")));
}

}  // namespace clustersim::scenarios::importers
