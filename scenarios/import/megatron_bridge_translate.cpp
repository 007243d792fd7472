// The Megatron-Bridge importer's field-by-field rules (megatron_bridge_translate.hpp).
#include "scenarios/import/megatron_bridge_translate.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "scenarios/error.hpp"
#include "scenarios/import/megatron_mapping.hpp"
#include "scenarios/load_model.hpp"
#include "scenarios/preset_catalog.hpp"

namespace clustersim::scenarios::importers::mbridge {

// Vocabulary: the model's, else the tokenizer's (setup.py _validate_and_set_vocab_size), else a known
// tokenizer's, else --vocab.
void translate_vocab(const Reader& r, Translator& t, FlagMap& f) {
  if (auto v = r.integer("model.vocab_size")) t.put("vocab-size", "model.vocab_size", std::to_string(*v));
  else if (auto tv = r.integer("tokenizer.vocab_size"))
    t.put("vocab-size", "tokenizer.vocab_size", std::to_string(*tv));
  else if (const int known = known_tokenizer_vocab(r.text("tokenizer.tokenizer_type").value_or(""),
                                                   r.text("tokenizer.tokenizer_model").value_or(""))) {
    const std::string path =
        r.present("tokenizer.tokenizer_model") ? "tokenizer.tokenizer_model" : "tokenizer.tokenizer_type";
    f.set("vocab-size", std::to_string(known), r.origin(path) + ": its vocabulary", r.label(path));
  } else if (r.options().vocab <= 0) {
    throw ScenarioError(
        format("{}: the vocabulary size is not in the file (model.vocab_size, tokenizer.vocab_size, or the "
               "tokenizer.tokenizer_model of a known tokenizer); give it with `clustersim import "
               "megatron-bridge --vocab N`",
               r.options().source));
  }
}

// The model's shape, attention, activation and embeddings.
void translate_model(const Reader& r, Translator& t, FlagMap& f, Imported& out, std::string* geglu_origin) {
  for (const char* field : {"num_layers", "hidden_size", "num_attention_heads"})
    if (!r.present(std::string("model.") + field)) {
      std::string recipes;
      for (const auto& rec : training_recipes()) recipes += (recipes.empty() ? "" : ", ") + std::string(rec.name);
      throw ScenarioError(
          format("{}: model.{} is not in the file: an override file holds only what it changes; name the recipe "
                 "it overrides with --recipe ({}), or import the run's run_config.yaml (its checkpoint "
                 "folder holds it)",
                 r.options().source, field, recipes));
    }
  const long long hidden = r.positive("model.hidden_size", 0);
  t.put("num-layers", "model.num_layers", std::to_string(r.positive("model.num_layers", 0)));
  t.put("hidden-size", "model.hidden_size", std::to_string(hidden));
  t.put("num-attention-heads", "model.num_attention_heads", std::to_string(r.positive("model.num_attention_heads", 0)));
  if (auto g = r.integer("model.num_query_groups")) {
    t.put("group-query-attention", "model.num_query_groups", "");
    t.put("num-query-groups", "model.num_query_groups", std::to_string(*g));
  } else {
    f.explain_absent(
        "group-query-attention",
        t.why("model.num_query_groups", "Megatron-Core default: num_query_groups null, multi-head attention"));
  }
  if (auto ffn = r.integer("model.ffn_hidden_size"))
    t.put("ffn-hidden-size", "model.ffn_hidden_size", std::to_string(*ffn));
  else
    t.put_default("ffn-hidden-size", std::to_string(4 * hidden),
                  r.has("model.ffn_hidden_size")
                      ? r.origin("model.ffn_hidden_size") + ": Megatron-Core's 4 x hidden_size"
                      : "Megatron-Core default: ffn_hidden_size null, 4 x hidden_size");
  if (auto kv = r.integer("model.kv_channels")) t.put("kv-channels", "model.kv_channels", std::to_string(*kv));
  // activation_func (a name, or to_yaml's {_target_: torch.nn.functional.silu}) with gated_linear_unit.
  std::string act = r.text("model.activation_func").value_or("gelu");
  act = act.substr(act.rfind('.') + 1);
  const bool gated = r.boolean("model.gated_linear_unit").value_or(false);
  const std::string act_origin =
      format("{}, {}", t.why("model.activation_func", "Megatron-Core default: activation_func gelu"),
             t.why("model.gated_linear_unit", "gated_linear_unit false"));
  const bool gelu = act.find("gelu") != std::string::npos;
  if (act == "silu" && gated) {
    f.set("swiglu", "", act_origin, r.label("model.activation_func"));
  } else if ((act == "squared_relu" || act == "relu2") && !gated) {
    f.set("squared-relu", "", act_origin, r.label("model.activation_func"));
  } else {
    f.explain_absent("swiglu", act_origin);
    f.explain_absent("squared-relu", act_origin);
    if (gelu && gated) *geglu_origin = act_origin;
    else if (!gelu) {
      out.warn(format("{}: {}{}: not an activation the simulator models; costed as {}",
                      r.label("model.activation_func"), act, gated ? " with gated_linear_unit" : "",
                      gated ? "swiglu" : "gelu"));
      if (gated) f.set("swiglu", "", act_origin + " (costed as swiglu)", r.label("model.activation_func"));
    }
  }
  t.put_bool("untie-embeddings-and-output-weights", "model.share_embeddings_and_output_weights", !r.nested_model(),
             r.nested_model() ? "GPTModelConfig default: share_embeddings_and_output_weights false"
                              : "GPTModelProvider default: share_embeddings_and_output_weights true",
             false);
  if (r.present("model.position_embedding_type")) t.put("position-embedding-type", "model.position_embedding_type");
  else
    t.put_default("position-embedding-type", "learned_absolute",
                  "GPTModelProvider default: position_embedding_type learned_absolute");
  if (r.present("model.normalization"))
    t.put("normalization", "model.normalization", r.choice("model.normalization", {"LayerNorm", "RMSNorm"}));
  else t.put_default("normalization", "LayerNorm", "GPTModelProvider default: normalization LayerNorm");
  t.put_bool("disable-bias-linear", "model.add_bias_linear", true, "Megatron-Core default: add_bias_linear true",
             false);
  t.put_bool("add-qkv-bias", "model.add_qkv_bias", false, "");
  for (const char* field : {"hidden_dropout", "attention_dropout"}) {
    const std::string path = std::string("model.") + field,
                      flag = field == std::string("hidden_dropout") ? "hidden-dropout" : "attention-dropout";
    if (r.number(path)) t.put(flag, path, r.text(path));
    else t.put_default(flag, "0.1", format("Megatron-Core default: {} 0.1", field));
  }
}

// MoE, MLA, MTP and sliding-window fields.
void translate_moe_mla(const Reader& r, Translator& t, FlagMap& f) {
  if (auto experts = r.integer("model.num_moe_experts"); experts && *experts > 0) {
    t.put("num-experts", "model.num_moe_experts", std::to_string(*experts));
    if (auto k = r.integer("model.moe_router_topk"))
      t.put("moe-router-topk", "model.moe_router_topk", std::to_string(*k));
    else t.put_default("moe-router-topk", "2", "Megatron-Core default: moe_router_topk 2");
    for (const auto& [field, flag] : {std::pair{"model.moe_router_num_groups", "moe-router-num-groups"},
                                      std::pair{"model.moe_router_group_topk", "moe-router-group-topk"}})
      if (auto v = r.integer(field)) t.put(flag, field, std::to_string(*v));
    if (auto v = r.integer("model.moe_ffn_hidden_size"))
      t.put("moe-ffn-hidden-size", "model.moe_ffn_hidden_size", std::to_string(*v));
    if (auto v = r.integer("model.moe_shared_expert_intermediate_size"))
      t.put("moe-shared-expert-intermediate-size", "model.moe_shared_expert_intermediate_size", std::to_string(*v));
    if (r.present("model.moe_layer_freq")) {
      const YAML::Node& n = r.entry("model.moe_layer_freq")->value;
      t.put("moe-layer-freq", "model.moe_layer_freq", n.IsSequence() ? shown(n) : n.Scalar());
    }
    if (r.number("model.moe_expert_capacity_factor"))
      t.put("moe-expert-capacity-factor", "model.moe_expert_capacity_factor",
            r.text("model.moe_expert_capacity_factor"));
    if (r.present("model.moe_token_dispatcher_type"))
      t.put("moe-token-dispatcher-type", "model.moe_token_dispatcher_type",
            r.choice("model.moe_token_dispatcher_type", {"allgather", "alltoall", "flex"}));
    else
      t.put_default("moe-token-dispatcher-type", "allgather",
                    "Megatron-Core default: moe_token_dispatcher_type allgather");
    if (r.present("model.moe_flex_dispatcher_backend"))
      t.put("moe-flex-dispatcher-backend", "model.moe_flex_dispatcher_backend");
    t.put_bool("moe-enable-deepep", "model.moe_enable_deepep", false, "");
    for (const char* field : {"moe_deepep_num_sms", "moe_hybridep_num_sms", "moe_flex_dispatcher_num_sms"})
      if (auto v = r.integer(std::string("model.") + field)) {
        std::string flag = field;
        std::replace(flag.begin(), flag.end(), '_', '-');
        t.put(flag, std::string("model.") + field, std::to_string(*v));
      }
    t.put_bool("moe-grouped-gemm", "model.moe_grouped_gemm", false, "");
    t.put_bool("moe-router-force-load-balancing", "model.moe_router_force_load_balancing", false,
               "Megatron-Core default: moe_router_force_load_balancing false, real routing");
    t.put_bool("moe-router-fusion", "model.moe_router_fusion", false, "");
    t.put_bool("moe-permute-fusion", "model.moe_permute_fusion", false, "");
  }
  if (r.boolean("model.multi_latent_attention").value_or(false)) {
    t.put("multi-latent-attention", "model.multi_latent_attention", "");
    if (r.has("model.q_lora_rank") && !r.present("model.q_lora_rank")) {
      f.explain_absent("q-lora-rank", r.origin("model.q_lora_rank") + ": no query compression");
    }
    const std::pair<const char*, const char*> mla[] = {{"q_lora_rank", "512"},
                                                       {"kv_lora_rank", "512"},
                                                       {"qk_head_dim", "128"},
                                                       {"qk_pos_emb_head_dim", "64"},
                                                       {"v_head_dim", "128"}};
    for (const auto& [field, fallback] : mla) {
      std::string flag = field;
      std::replace(flag.begin(), flag.end(), '_', '-');
      const std::string path = std::string("model.") + field;
      if (auto v = r.integer(path)) t.put(flag, path, std::to_string(*v));
      else if (!r.has(path))
        t.put_default(flag, fallback, format("MLATransformerConfig default: {} {}", field, fallback));
    }
  }
  if (auto mtp = r.integer("model.mtp_num_layers"))
    t.put("mtp-num-layers", "model.mtp_num_layers", std::to_string(*mtp));
  if (r.present("model.window_size")) {
    const YAML::Node& w = r.entry("model.window_size")->value;
    if (w.IsSequence() && w.size() == 2) t.put("window-size", "model.window_size", shown(w[0]) + "," + shown(w[1]));
    else
      throw ScenarioError(
          format("{}: expected [left, right] token counts, found {}", r.label("model.window_size"), shown(w)));
  }
  if (r.present("model.window_attn_skip_freq")) {
    const YAML::Node& n = r.entry("model.window_attn_skip_freq")->value;
    t.put("window-attn-skip-freq", "model.window_attn_skip_freq", n.IsSequence() ? shown(n) : n.Scalar());
  }
}

// The pipeline layout as Megatron-Core's string form: a list of stages (lists of "embedding",
// "decoder", "mtp", "loss") joined by '|'.
std::string layout_text(const Reader& r, const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  if (!n.IsSequence())
    throw ScenarioError(format("{}: expected a layout string or a list of stages, found {}",
                               r.label("model.pipeline_model_parallel_layout"), node_kind(n)));
  static const std::map<std::string, char> kLayers = {
      {"embedding", 'E'}, {"decoder", 't'}, {"mtp", 'm'}, {"loss", 'L'}};
  std::string s;
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (i) s += '|';
    if (!n[i].IsSequence())
      throw ScenarioError(
          format("{}: stage {} is not a list of layers", r.label("model.pipeline_model_parallel_layout"), i));
    for (const auto& layer : n[i]) {
      auto it = kLayers.find(shown(layer));
      if (it == kLayers.end())
        throw ScenarioError(format("{}: '{}' is not a layer (embedding, decoder, mtp, loss)",
                                   r.label("model.pipeline_model_parallel_layout"), shown(layer)));
      s += it->second;
    }
  }
  return s;
}

// Parallel degrees, pipeline and the communication overlaps (comm_overlap.py's rules when the section is there).
Layout translate_parallelism(const Reader& r, Translator& t, FlagMap& f, long long gpus) {
  Layout l;
  const std::pair<const char*, const char*> degrees[] = {
      {"tensor_model_parallel_size", "tensor-model-parallel-size"},
      {"pipeline_model_parallel_size", "pipeline-model-parallel-size"},
      {"context_parallel_size", "context-parallel-size"},
      {"expert_model_parallel_size", "expert-model-parallel-size"}};
  for (const auto& [field, flag] : degrees) {
    const std::string path = std::string("model.") + field;
    const long long v = r.positive(path, 1);
    if (r.present(path)) t.put(flag, path, std::to_string(v));
    else t.put_default(flag, "1", format("Megatron-Core default: {} 1", field));
  }
  l.tp = r.positive("model.tensor_model_parallel_size", 1);
  l.pp = r.positive("model.pipeline_model_parallel_size", 1);
  l.cp = r.positive("model.context_parallel_size", 1);
  if (gpus > 0 && gpus % (l.tp * l.pp * l.cp) == 0) l.dp = gpus / (l.tp * l.pp * l.cp);
  if (auto v = r.integer("model.expert_tensor_parallel_size"))
    t.put("expert-tensor-parallel-size", "model.expert_tensor_parallel_size", std::to_string(*v));
  else
    f.explain_absent("expert-tensor-parallel-size", t.why("model.expert_tensor_parallel_size",
                                                          "Megatron-Core default: expert_tensor_parallel_size null") +
                                                        ": the tensor-parallel size");
  if (auto v = r.integer("model.virtual_pipeline_model_parallel_size")) {
    l.vpp = *v;
    t.put("virtual-pipeline-model-parallel-size", "model.virtual_pipeline_model_parallel_size", std::to_string(*v));
  }
  if (r.present("model.pipeline_model_parallel_layout")) {
    t.put("pipeline-model-parallel-layout", "model.pipeline_model_parallel_layout",
          layout_text(r, r.entry("model.pipeline_model_parallel_layout")->value));
    const std::string s = layout_text(r, r.entry("model.pipeline_model_parallel_layout")->value);
    l.vpp =
        std::max(1LL, static_cast<long long>(std::count(s.begin(), s.end(), '|') + 1) / l.pp);  // for the overlap rule
  }
  t.put_bool("sequence-parallel", "model.sequence_parallel", false, "Megatron-Core default: sequence_parallel false");
  if (auto v = r.integer("model.num_layers_in_first_pipeline_stage"))
    t.put("decoder-first-pipeline-num-layers", "model.num_layers_in_first_pipeline_stage", std::to_string(*v));
  if (auto v = r.integer("model.num_layers_in_last_pipeline_stage"))
    t.put("decoder-last-pipeline-num-layers", "model.num_layers_in_last_pipeline_stage", std::to_string(*v));
  t.put_bool("account-for-embedding-in-pipeline-split", "model.account_for_embedding_in_pipeline_split", false, "");
  t.put_bool("account-for-loss-in-pipeline-split", "model.account_for_loss_in_pipeline_split", false, "");

  // comm_overlap (CommOverlapConfig.setup): present, it sets the model's overlaps from its own fields,
  // P2P overlap on for the interleaved schedule, the rest off unless it says so.
  const bool comm = r.present("comm_overlap");
  const std::string comm_origin = comm ? r.origin("comm_overlap") : "";
  auto overlap_field = [&](const char* field) { return std::string("comm_overlap.") + field; };
  if (comm && r.present(overlap_field("overlap_p2p_comm"))) {
    t.put_bool("no-overlap-p2p-communication", overlap_field("overlap_p2p_comm"), false, "", false);
  } else if (comm) {
    const bool on = l.pp > 1 && l.vpp > 1;
    const std::string why = format("{}: comm_overlap's P2P overlap {} ({})", comm_origin, on ? "on" : "off",
                                   on ? "interleaved schedule" : "no interleaved schedule");
    if (on) f.explain_absent("no-overlap-p2p-communication", why);
    else f.set("no-overlap-p2p-communication", "", why, r.label("comm_overlap"));
  } else {
    t.put_bool("no-overlap-p2p-communication", "model.overlap_p2p_comm", false,
               "Megatron-Core default: overlap_p2p_comm false (no comm_overlap section)", false);
  }
  if (comm) {
    const bool asked = r.boolean(overlap_field("tp_comm_overlap")).value_or(false);
    const bool sp = r.boolean("model.sequence_parallel").value_or(false);
    const std::string why =
        r.has(overlap_field("tp_comm_overlap")) ? r.origin(overlap_field("tp_comm_overlap")) : comm_origin;
    if (asked && l.tp >= 2 && sp) f.set("tp-comm-overlap", "", why, r.label(overlap_field("tp_comm_overlap")));
    else
      f.explain_absent("tp-comm-overlap", asked ? why + format(": off, as comm_overlap turns it off with {}",
                                                               l.tp < 2 ? "TP < 2" : "sequence_parallel false")
                                                : why);
  } else {
    t.put_bool("tp-comm-overlap", "model.tp_comm_overlap", false, "Megatron-Core default: tp_comm_overlap false");
  }
  return l;
}

void translate_moe_overlap(const Reader& r, Translator& t, FlagMap& f, Imported& out) {
  if (!r.present("comm_overlap")) {
    t.put_bool("overlap-moe-expert-parallel-comm", "model.overlap_moe_expert_parallel_comm", false,
               "Megatron-Core default: overlap_moe_expert_parallel_comm false");
    return;
  }
  if (r.present("comm_overlap.overlap_moe_expert_parallel_comm")) {
    t.put_bool("overlap-moe-expert-parallel-comm", "comm_overlap.overlap_moe_expert_parallel_comm", false, "");
    return;
  }
  f.explain_absent("overlap-moe-expert-parallel-comm",
                   r.origin("comm_overlap") + ": comm_overlap sets the model's EP overlap off unless it says so");
  if (r.boolean("model.overlap_moe_expert_parallel_comm").value_or(false))
    out.warn(
        format("{}: true is overwritten by comm_overlap, which turns the EP overlap off unless "
               "comm_overlap.overlap_moe_expert_parallel_comm says so (comm_overlap.py): imported as off",
               r.label("model.overlap_moe_expert_parallel_comm")));
}

// DDP: the distributed optimizer, FSDP, the gradient-reduce and parameter-gather overlaps (with a
// comm_overlap section and the distributed optimizer, on when there is data parallelism).
void translate_ddp(const Reader& r, Translator& t, FlagMap& f, const Layout& l) {
  const bool dist_opt = r.boolean("ddp.use_distributed_optimizer").value_or(false);
  t.put_bool("use-distributed-optimizer", "ddp.use_distributed_optimizer", false,
             "DistributedDataParallelConfig default: use_distributed_optimizer false");
  for (const char* field : {"overlap_grad_reduce", "overlap_param_gather"}) {
    std::string flag = field;
    std::replace(flag.begin(), flag.end(), '_', '-');
    const std::string user = std::string("comm_overlap.") + field;
    if (r.present("comm_overlap") && dist_opt && r.present(user)) {
      t.put_bool(flag, user, false, "");
    } else if (r.present("comm_overlap") && dist_opt) {
      const bool on = l.dp > 1;
      const std::string why = format("{}: comm_overlap's {} {} (data-parallel size {})", r.origin("comm_overlap"),
                                     field, on ? "on" : "off", l.dp > 0 ? std::to_string(l.dp) : "unknown");
      if (on) f.set(flag, "", why, r.label("comm_overlap"));
      else f.explain_absent(flag, why);
    } else {
      t.put_bool(flag, std::string("ddp.") + field, false,
                 format("DistributedDataParallelConfig default: {} false", field));
    }
  }
  // FSDP: dist.use_megatron_fsdp (ConfigContainer sets ddp's from it) or ddp.use_megatron_fsdp.
  const char* fsdp_path =
      r.boolean("dist.use_megatron_fsdp").value_or(false) ? "dist.use_megatron_fsdp" : "ddp.use_megatron_fsdp";
  t.put_bool("use-megatron-fsdp", fsdp_path, false, "");
  t.put_bool("use-torch-fsdp2", "dist.use_torch_fsdp2", false, "");
  t.put_bool("use-custom-fsdp", "ddp.use_custom_fsdp", false, "");
  if (r.present("ddp.data_parallel_sharding_strategy"))
    t.put("data-parallel-sharding-strategy", "ddp.data_parallel_sharding_strategy");
  else if (r.boolean(fsdp_path).value_or(false))
    t.put_default("data-parallel-sharding-strategy", "no_shard",
                  "DistributedDataParallelConfig default: data_parallel_sharding_strategy no_shard");
}

// Precision: mixed_precision's fields when it is set (they overwrite the model's and DDP's), else the model's.
void translate_precision(const Reader& r, Translator& t, FlagMap& f, Imported& out) {
  const bool mp = r.has("mixed_precision") && (r.present("mixed_precision") ||
                                               std::any_of(r.entries().begin(), r.entries().end(), [](const auto& e) {
                                                 return e.first.rfind("mixed_precision.", 0) == 0;
                                               }));
  const std::string sec = mp ? "mixed_precision." : "model.";
  auto path = [&](const char* field) { return sec + field; };
  auto why_default = [&](const char* field, const std::string& value) {
    return mp ? format("MixedPrecisionConfig default: {} {}", field, value)
              : format("Megatron-Core default: {} {}", field, value);
  };
  auto value_or_default = [&](const char* field, const std::string& model_default) {
    return r.text(path(field)).value_or(mp ? mixed_precision_default(field) : model_default);
  };
  const std::string fp4 = value_or_default("fp4", "null"), fp8 = value_or_default("fp8", "null");
  if (fp4 != "null") {
    t.put("fp4-format", path("fp4"), r.choice(path("fp4"), {"e2m1"}));
  } else if (fp8 != "null") {
    t.put("fp8-format", path("fp8"), r.choice(path("fp8"), {"hybrid", "e4m3"}));
    const std::string recipe = value_or_default("fp8_recipe", "delayed");
    if (r.present(path("fp8_recipe")))
      t.put("fp8-recipe", path("fp8_recipe"),
            r.choice(path("fp8_recipe"), {"tensorwise", "delayed", "mxfp8", "blockwise"}));
    else t.put_default("fp8-recipe", recipe, why_default("fp8_recipe", recipe));
  }
  t.put_bool("bf16", path("bf16"), false,
             mp ? "MixedPrecisionConfig default: bf16 false" : "Megatron-Core default: bf16 false");
  t.put_bool("fp16", path("fp16"), false, "");
  if (!r.boolean(path("bf16")).value_or(false) && !r.boolean(path("fp16")).value_or(false)) {
    const std::string why = mp ? format("{}: neither bf16 nor fp16", r.origin("mixed_precision"))
                               : "no mixed_precision, and model.bf16 and fp16 false";
    f.explain_absent("bf16", why + ": fp32 training");
    out.warn(format("{}: imported as fp32 training (is mixed_precision missing?)", why));
  }
  if (fp8 != "null" || fp4 != "null") {
    t.put_bool("first-last-layers-bf16", path("first_last_layers_bf16"), false, "");
    for (const char* field : {"num_layers_at_start_in_bf16", "num_layers_at_end_in_bf16"}) {
      std::string flag = field;
      std::replace(flag.begin(), flag.end(), '_', '-');
      if (r.present(path(field))) t.put(flag, path(field), std::to_string(*r.integer(path(field))));
      else t.put_default(flag, mp ? "0" : "1", why_default(field, mp ? "0" : "1"));
    }
  }
  // Gradients are reduced in fp32 unless grad_reduce_in_fp32 is false (mixed_precision's overwrites DDP's).
  const std::string reduce = mp ? "mixed_precision.grad_reduce_in_fp32" : "ddp.grad_reduce_in_fp32";
  t.put_bool("grad-reduce-in-bf16", reduce, mp,
             mp ? "MixedPrecisionConfig default: grad_reduce_in_fp32 true"
                : "DistributedDataParallelConfig default: grad_reduce_in_fp32 false",
             false);
}

// Recompute, offloading, fusions, attention backend and CUDA graphs.
void translate_kernels(const Reader& r, Translator& t) {
  if (r.present("model.recompute_granularity"))
    t.put("recompute-granularity", "model.recompute_granularity",
          r.choice("model.recompute_granularity", {"full", "selective"}));
  else
    t.put_bool("recompute-granularity", "model.recompute_granularity", false,
               "Megatron-Core default: recompute_granularity null");
  if (r.present("model.recompute_method"))
    t.put("recompute-method", "model.recompute_method", r.choice("model.recompute_method", {"uniform", "block"}));
  if (auto v = r.integer("model.recompute_num_layers"))
    t.put("recompute-num-layers", "model.recompute_num_layers", std::to_string(*v));
  if (r.present("model.recompute_modules")) {
    const YAML::Node& m = r.entry("model.recompute_modules")->value;
    std::string names;
    if (m.IsSequence())
      for (const auto& x : m) names += (names.empty() ? "" : " ") + shown(x);
    else names = shown(m);
    t.put("recompute-modules", "model.recompute_modules", names);
  }
  t.put_bool("cpu-offloading", "model.cpu_offloading", false, "");
  if (auto v = r.integer("model.cpu_offloading_num_layers"))
    t.put("cpu-offloading-num-layers", "model.cpu_offloading_num_layers", std::to_string(*v));
  t.put_bool("activation-func-fp8-input-store", "model.activation_func_fp8_input_store", false, "");
  t.put_bool("cross-entropy-loss-fusion", "model.cross_entropy_loss_fusion", true,
             "GPTModelProvider default: cross_entropy_loss_fusion true");
  if (r.present("model.cross_entropy_fusion_impl"))
    t.put("cross-entropy-fusion-impl", "model.cross_entropy_fusion_impl",
          r.choice("model.cross_entropy_fusion_impl", {"native", "te"}));
  else t.put_default("cross-entropy-fusion-impl", "native", "Megatron-Core default: cross_entropy_fusion_impl native");
  // attention_backend: an AttnBackend (to_yaml: {_name_: auto}), a name, or null (Transformer Engine chooses).
  if (r.present("model.attention_backend"))
    t.put("attention-backend", "model.attention_backend",
          r.choice("model.attention_backend", {"auto", "flash", "fused", "unfused", "local"}));
  // CUDA graphs: cuda_graph_impl, else the deprecated booleans Megatron-Core's __post_init__ turns into it
  // (enable_cuda_graph: local, external_cuda_graph: transformer_engine), and the scope (cuda_graph_scope,
  // renamed cuda_graph_modules; "full", the whole layer, is the local implementation's default).
  t.put_bool("enable-cuda-graph", "model.enable_cuda_graph", false, "");
  t.put_bool("external-cuda-graph", "model.external_cuda_graph", false, "");
  const std::string impl =
      r.present("model.cuda_graph_impl")
          ? *r.choice("model.cuda_graph_impl", {"none", "local", "transformer_engine", "full_iteration"})
          : "none";
  if (impl != "none") t.put("cuda-graph-impl", "model.cuda_graph_impl", impl);
  else if (r.boolean("model.enable_cuda_graph").value_or(false))
    t.put("cuda-graph-impl", "model.enable_cuda_graph", "local");
  else if (r.boolean("model.external_cuda_graph").value_or(false))
    t.put("cuda-graph-impl", "model.external_cuda_graph", "transformer_engine");
  else if (r.present("model.cuda_graph_impl")) t.put("cuda-graph-impl", "model.cuda_graph_impl", impl);
  for (const char* field : {"model.cuda_graph_scope", "model.cuda_graph_modules"}) {
    if (!r.present(field)) continue;
    const YAML::Node& s = r.entry(field)->value;
    std::string names;
    auto add = [&](const YAML::Node& x) {
      const std::string n = shown(x);
      if (n != "full") names += (names.empty() ? "" : " ") + n;
    };
    if (s.IsSequence())
      for (const auto& x : s) add(x);
    else add(s);
    if (!names.empty()) t.put("cuda-graph-scope", field, names);
  }
}

void translate_training(const Reader& r, Translator& t) {
  // The sequence: the dataset's (GPTDatasetConfig.seq_length, sequence_length before 2025-11), which
  // ConfigContainer.validate requires to equal the model's.
  const char* data = r.present("dataset.seq_length") ? "dataset.seq_length" : "dataset.sequence_length";
  const auto data_seq = r.integer(data), model_seq = r.integer("model.seq_length");
  if (data_seq && model_seq && *data_seq != *model_seq)
    throw ScenarioError(
        format("{} {} differs from {} {}: Megatron-Bridge requires them equal (ConfigContainer.validate)",
               r.label("model.seq_length"), *model_seq, r.label(data), *data_seq));
  if (data_seq) t.put("seq-length", data, std::to_string(r.positive(data, 1)));
  else if (model_seq) t.put("seq-length", "model.seq_length", std::to_string(r.positive("model.seq_length", 1)));
  else
    throw ScenarioError(format("{}: dataset.seq_length is not in the file (name the recipe it overrides with --recipe)",
                               r.options().source));
  if (!r.present("train.micro_batch_size"))
    throw ScenarioError(
        format("{}: train.micro_batch_size is not in the file (name the recipe it overrides with --recipe)",
               r.options().source));
  t.put("micro-batch-size", "train.micro_batch_size", std::to_string(r.positive("train.micro_batch_size", 1)));
  if (r.present("train.global_batch_size"))
    t.put("global-batch-size", "train.global_batch_size", std::to_string(r.positive("train.global_batch_size", 1)));
  if (auto v = r.integer("train.train_iters")) t.put("train-iters", "train.train_iters", std::to_string(*v));
  else if (auto s = r.integer("train.train_samples")) t.put("train-samples", "train.train_samples", std::to_string(*s));
  if (r.present("train.rampup_batch_size"))
    t.put("rampup-batch-size", "train.rampup_batch_size", shown(r.entry("train.rampup_batch_size")->value));
}

// Every field neither mapped nor ignored: warned when not its default (a field the importer does not
// know, whatever its value). With mixed_precision set, the model's and DDP's precision fields are
// overwritten by it, so its values are the ones checked.
void warn_unmodelled(const Reader& r, Imported& out) {
  const bool mp = std::any_of(r.entries().begin(), r.entries().end(),
                              [](const auto& e) { return section_of(e.first) == "mixed_precision"; });
  static const std::set<std::string> kOverwrittenByPrecision = {"model.fp8_param",
                                                                "model.fp8_wgrad",
                                                                "model.fp8_dot_product_attention",
                                                                "model.fp8_multi_head_attention",
                                                                "model.fp4_param",
                                                                "ddp.fp8_param_gather",
                                                                "ddp.fp4_param_gather",
                                                                "ddp.reuse_grad_buf_for_mxfp8_param_ag"};
  for (const auto& [path, e] : r.entries()) {
    if (path.find('.') == std::string::npos) {
      if (path == "peft" && e.value && !e.value.IsNull())
        out.warn(format("{}: {}: parameter-efficient fine-tuning is not modelled; costed as training every weight",
                        e.label, shown(e.value)));
      continue;
    }
    if (mp && kOverwrittenByPrecision.count(path)) continue;
    if (section_of(path) == "env_vars") {
      out.warn(format("{}: {}: an environment variable, not modelled", e.label, shown(e.value)));
      continue;
    }
    if (section_of(path) == "peft") continue;
    const FieldInfo* info = field_info(path);
    if (!info) {
      out.warn(format("{}: {}: not a field the importer knows; not modelled, ignored", e.label, shown(e.value)));
    } else if (info->use == FieldUse::known && !same_value(normalized_text(e.value), info->default_text)) {
      out.warn(format("{}: {}: not modelled, ignored", e.label, shown(e.value)));
    }
  }
}

// A precision field of the model or DDP that the file sets and mixed_precision overwrites with another value
// (mixed_precision.py update_config_with_precision_overrides): said, as the file's value has no effect.
void warn_overwritten_precision(const Reader& r, Imported& out) {
  const bool mp = std::any_of(r.entries().begin(), r.entries().end(),
                              [](const auto& e) { return section_of(e.first) == "mixed_precision"; });
  if (!mp) return;
  const std::string file = r.options().source + ":";
  for (const char* field :
       {"bf16", "fp16", "fp8", "fp8_recipe", "fp4", "fp4_recipe", "first_last_layers_bf16",
        "num_layers_at_start_in_bf16", "num_layers_at_end_in_bf16", "grad_reduce_in_fp32", "fp8_param_gather"}) {
    const std::string mine = std::string("mixed_precision.") + field;
    const std::string effective = r.has(mine) ? normalized_text(r.entry(mine)->value) : mixed_precision_default(field);
    for (const char* section : {"model.", "ddp."}) {
      const Entry* e = r.entry(section + std::string(field));
      if (!e || e->label.rfind(file, 0) != 0 || effective.empty() || same_value(normalized_text(e->value), effective))
        continue;
      out.warn(
          format("{}: {}: overwritten by mixed_precision's {} {} (Megatron-Bridge applies mixed_precision over the "
                 "model and DDP "
                 "settings)",
                 e->label, shown(e->value), field, effective));
    }
  }
}

}  // namespace clustersim::scenarios::importers::mbridge
