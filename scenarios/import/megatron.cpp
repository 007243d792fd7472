// Megatron-LM / Megatron-Core pretrain_gpt.py arguments -> scenario keys. Defaults are Megatron's own
// (megatron/training/arguments.py), written into the scenario with their origin so that a flag left out
// of the script is not silently replaced by a clustersim default.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "scenarios/error.hpp"
#include "scenarios/import/flag_map.hpp"
#include "scenarios/import/importers.hpp"
#include "scenarios/import/megatron_flags.hpp"
#include "scenarios/import/megatron_mapping.hpp"
#include "scenarios/import/moe_layer_pattern.hpp"
#include "scenarios/import/shell_words.hpp"

namespace clustersim::scenarios::importers {
namespace {

using fmt::format;

struct Context {
  const FlagMap& f;
  const ImportOptions& opt;
  Imported& out;
  long long layers = 0, hidden = 0, heads = 0, tp = 1, pp = 1, cp = 1, gpus = 0, gpus_per_node = 0;

  long long need(const std::string& flag) const {
    auto v = f.integer(flag);
    if (!v) throw ScenarioError(format("{}: --{} is required (pretrain_gpt.py has no default for it)", f.source(), flag));
    if (*v <= 0) throw ScenarioError(format("{}: --{}: expected a positive integer, found {}", f.source(), flag, *v));
    return *v;
  }
  // Sets `path` from an integer flag, or to `fallback` with `why` when the flag is absent.
  long long integer(const std::string& path, const std::string& flag, long long fallback, const std::string& why) {
    const auto v = f.integer(flag);
    out.set(path, format("{}", v ? *v : fallback), f.origin_or(flag, why));
    return v ? *v : fallback;
  }
};

}  // namespace

int known_tokenizer_vocab(const std::string& type, const std::string& model) {
  auto has = [&](const char* s) { return model.find(s) != std::string::npos; };
  if (type == "GPT2BPETokenizer") return 50257;  // GPT-2 BPE (Radford et al. 2019)
  if (type == "Llama2Tokenizer" || has("Llama-2") || has("llama-2") || has("llama2")) return 32000;
  if (has("Llama-3") || has("llama-3") || has("llama3") || has("Llama3")) return 128256;
  if (has("DeepSeek-V3") || has("deepseek-v3") || has("DeepSeek-R1")) return 129280;  // its config.json vocab_size
  return 0;
}

namespace {

// Vocabulary: --vocab-size, else the size of a well-known tokenizer, else --vocab from the command line.
void import_vocab(Context& c) {
  if (auto v = c.f.integer("vocab-size")) return c.out.set("model.vocab", format("{}", *v), c.f.origin("vocab-size"));
  const std::string type = c.f.text("tokenizer-type").value_or("");
  const std::string model = c.f.text("tokenizer-model").value_or("");
  const int vocab = known_tokenizer_vocab(type, model);
  if (vocab > 0) return c.out.set("model.vocab", format("{}", vocab), format("the vocabulary of {}", model.empty() ? type : model));
  if (c.opt.vocab > 0) return c.out.set("model.vocab", format("{}", c.opt.vocab), "--vocab on the import command line");
  throw ScenarioError(format("{}: the vocabulary size is not in the arguments (--vocab-size, or a known --tokenizer-type / "
                             "--tokenizer-model); give it with `clustersim import megatron --vocab N`", c.f.source()));
}

void import_dense_model(Context& c) {
  c.layers = c.integer("model.layers", "num-layers", c.need("num-layers"), "");
  c.hidden = c.integer("model.hidden", "hidden-size", c.need("hidden-size"), "");
  c.heads = c.integer("model.heads", "num-attention-heads", c.need("num-attention-heads"), "");
  if (!c.f.has("multi-latent-attention")) {
    if (c.f.has("group-query-attention")) c.integer("model.kv_heads", "num-query-groups", 1, "Megatron default with --group-query-attention: 1");
    else
      c.out.set("model.kv_heads", format("{}", c.heads),
                c.f.origin_or("group-query-attention", "multi-head attention (no --group-query-attention)"));
  }
  const bool swiglu = c.f.has("swiglu");
  const long long ffn_default = swiglu ? static_cast<long long>(4.0 * c.hidden * 2 / 3 / 64) * 64 : 4 * c.hidden;
  c.integer("model.ffn_hidden", "ffn-hidden-size", ffn_default,
            swiglu ? "Megatron default with --swiglu: int(8h/3 / 64) * 64" : "Megatron default: 4h");
  import_vocab(c);
  const char* act = swiglu ? "swiglu" : c.f.has("squared-relu") ? "relu2" : "gelu";
  c.out.set("model.activation", act,
            swiglu ? c.f.origin("swiglu") : c.f.origin_or("squared-relu", "Megatron default: gelu"));
  const bool untied = c.f.has("untie-embeddings-and-output-weights");
  c.out.set("model.tied_embeddings", untied ? "false" : "true",
            c.f.origin_or("untie-embeddings-and-output-weights", "Megatron default: tied"));
  const std::string pos = c.f.text("position-embedding-type").value_or(c.f.has("use-rotary-position-embeddings") ? "rope" : "learned_absolute");
  if (pos != "rope" && pos != "yarn" && pos != "learned_absolute")
    c.out.warn(format("{} {}: costed as rope", c.f.label("position-embedding-type"), pos));
  c.out.set("model.position",
            pos == "learned_absolute" ? "learned"
            : pos == "yarn"           ? "yarn"
                                      : "rope",
            c.f.origin_or("position-embedding-type", "Megatron default: learned_absolute"));
  const std::string norm = c.f.text("normalization").value_or("LayerNorm");
  c.out.set("model.norm", norm == "RMSNorm" ? "rmsnorm" : "layernorm",
            c.f.origin_or("normalization", "Megatron default: LayerNorm"));
  const bool bias = !c.f.has("disable-bias-linear");
  c.out.set("model.bias", bias ? "true" : "false",
            c.f.origin_or("disable-bias-linear", "Megatron default: --add-bias-linear"));
  if (c.f.has("add-qkv-bias")) c.out.set("model.qkv_bias", "true", c.f.origin("add-qkv-bias"));
  const double dropout = c.f.number("hidden-dropout").value_or(0.1);
  c.out.set("model.dropout", yaml_number(dropout),
            c.f.origin_or("hidden-dropout", "Megatron default: --hidden-dropout 0.1"));
  if (c.f.number("attention-dropout").value_or(0.1) != dropout)
    c.out.warn(format("{} {} differs from {}: model.dropout uses the hidden dropout", c.f.label("attention-dropout"),
                      c.f.number("attention-dropout").value_or(0.1), c.f.label("hidden-dropout")));
  if (auto kv = c.f.integer("kv-channels"); kv && *kv * c.heads != c.hidden && !c.f.has("multi-latent-attention")) c.out.set("model.head_dim", format("{}", *kv), c.f.origin("kv-channels"));
}

// --window-size L,R (sliding-window attention, Megatron's TransformerConfig.window_size) on every layer,
// or with --window-attn-skip-freq N on all but every N-th (N-1 windowed layers, then a full one), or
// on the layers a 0/1 list marks 1.
void import_window(Context& c) {
  const auto text = c.f.text("window-size");
  if (!text) return;
  char* end = nullptr;
  const long long left = std::strtoll(text->c_str() + (text->front() == '(' ? 1 : 0), &end, 10);
  if (left <= 0) {
    c.out.warn(format("{} {}: no finite left window, read as full attention", c.f.label("window-size"), *text));
    return;
  }
  long long sliding = c.layers;
  const std::string skip = c.f.text("window-attn-skip-freq").value_or("");
  if (!skip.empty() && skip.find_first_not_of("0123456789") == std::string::npos) {
    const long long n = std::stoll(skip);
    if (n < 1) throw ScenarioError(format("{} {}: must be at least 1", c.f.where("window-attn-skip-freq"), skip));
    sliding = c.layers - c.layers / n;
  } else if (!skip.empty()) {
    const std::vector<bool> windowed = eval_layer_list(skip, "window-attn-skip-freq", c.f.source());
    if (static_cast<long long>(windowed.size()) != c.layers)
      throw ScenarioError(format("{} lists {} layers but {} is {}", c.f.where("window-attn-skip-freq"), windowed.size(),
                                 c.f.label("num-layers"), c.layers));
    sliding = std::count(windowed.begin(), windowed.end(), true);
  }
  if (sliding == 0) return;
  const long long every = std::max(1LL, (c.layers + sliding / 2) / sliding);
  if (c.layers / every != sliding)
    c.out.warn(format("{} of {} layers use the sliding window: approximated as every {}-th layer", sliding, c.layers, every));
  c.out.set("model.sliding_window.tokens", format("{}", left), c.f.origin("window-size"));
  c.out.set("model.sliding_window.every", format("{}", every),
            skip.empty() ? "--window-size on every layer" : format("{} ({} of {} layers windowed)", c.f.origin("window-attn-skip-freq"), sliding, c.layers));
}

void import_moe_mla(Context& c) {
  if (auto experts = c.f.integer("num-experts")) {
    c.out.set("model.moe.experts", format("{}", *experts), c.f.origin("num-experts"));
    c.integer("model.moe.top_k", "moe-router-topk", 2, "Megatron default: --moe-router-topk 2");
    const long long ffn = c.f.integer("moe-ffn-hidden-size").value_or(std::stoll(c.out.find("model.ffn_hidden")->value));
    c.out.set("model.moe.expert_ffn_hidden", format("{}", ffn),
              c.f.origin_or("moe-ffn-hidden-size", "Megatron default: --ffn-hidden-size"));
    if (auto shared = c.f.integer("moe-shared-expert-intermediate-size")) {
      if (*shared % ffn != 0) c.out.warn(format("shared-expert width {} is not a multiple of the expert width {}: rounded", *shared, ffn));
      c.out.set("model.moe.shared_experts", format("{}", std::max(1LL, (*shared + ffn / 2) / ffn)), c.f.origin("moe-shared-expert-intermediate-size"));
    }
    const MoeLayerPattern pattern = parse_moe_layer_freq(c.f.text("moe-layer-freq").value_or("1"), static_cast<int>(c.layers), c.f.source());
    if (pattern.dense_layers > 0) c.out.set("model.moe.dense_layers", format("{}", pattern.dense_layers), c.f.origin("moe-layer-freq"));
    if (pattern.frequency != 1) c.out.set("model.moe.frequency", format("{}", pattern.frequency), c.f.origin("moe-layer-freq"));
    if (!pattern.note.empty()) c.out.warn(pattern.note);
    if (auto cf = c.f.number("moe-expert-capacity-factor")) c.out.set("model.moe.capacity_factor", yaml_number(*cf), c.f.origin("moe-expert-capacity-factor"));
    // Group-limited routing (DeepSeek-V3's node-limited routing): both flags or neither.
    if (auto groups = c.f.integer("moe-router-num-groups"); groups && *groups > 1) {
      c.out.set("model.moe.router_groups", format("{}", *groups), c.f.origin("moe-router-num-groups"));
      if (auto top = c.f.integer("moe-router-group-topk"))
        c.out.set("model.moe.router_group_top_k", format("{}", *top), c.f.origin("moe-router-group-topk"));
    }
  }
  if (c.f.has("multi-latent-attention")) {
    c.out.set("model.mla.q_lora_rank", format("{}", c.f.integer("q-lora-rank").value_or(0)),
              c.f.origin_or("q-lora-rank", "Megatron default: no query compression"));
    c.integer("model.mla.kv_lora_rank", "kv-lora-rank", 32, "Megatron default: --kv-lora-rank 32");
    c.integer("model.mla.qk_nope_head_dim", "qk-head-dim", 128, "Megatron default: --qk-head-dim 128");
    c.integer("model.mla.qk_rope_head_dim", "qk-pos-emb-head-dim", 64, "Megatron default: --qk-pos-emb-head-dim 64");
    c.integer("model.mla.v_head_dim", "v-head-dim", 128, "Megatron default: --v-head-dim 128");
  }
  if (auto mtp = c.f.integer("mtp-num-layers"); mtp && *mtp > 0) c.out.set("model.mtp_layers", format("{}", *mtp), c.f.origin("mtp-num-layers"));
}

}  // namespace

long long import_megatron_model(Imported& out, const FlagMap& f, const ImportOptions& opt) {
  Context c{f, opt, out};
  import_dense_model(c);
  import_window(c);
  import_moe_mla(c);
  return c.layers;
}

long long import_megatron_cluster(Imported& out, const FlagMap& f, const ShellWords& sh, const ImportOptions& opt,
                                  long long* gpus_per_node);

Imported import_megatron(const std::string& text, const ImportOptions& opt) {
  std::map<std::string, std::string> env;
  if (opt.gpus > 0) env["WORLD_SIZE"] = std::to_string(opt.gpus);
  const ShellWords sh = read_shell_words(text, env);
  const FlagMap f(sh.words, megatron_boolean_flags(), opt.source, megatron_multi_value_flags());
  if (!f.has("num-layers") && !f.has("hidden-size"))
    throw ScenarioError(format("{}: no Megatron-LM model arguments found (--num-layers, --hidden-size, ...)", opt.source));
  Imported out;
  out.name = format("{} (imported from Megatron-LM arguments)", opt.source);
  for (const std::string& note : sh.notes) out.warn(format("{}:{}", opt.source, note.substr(5)));
  const long long layers = import_megatron_model(out, f, opt);
  out.set("hardware", opt.hardware.empty() ? "h100-sxm" : opt.hardware,
          opt.hardware.empty() ? "assumed: the arguments do not name the GPU (clustersim import --hardware)" : "--hardware on the import command line");
  if (opt.hardware.empty()) out.warn("hardware not given: assumed h100-sxm (pass --hardware NAME or a profile file)");
  long long gpus_per_node = 0;
  const long long gpus = import_megatron_cluster(out, f, sh, opt, &gpus_per_node);
  import_megatron_parallelism(out, f, layers, gpus_per_node);
  import_megatron_training(out, f, gpus);
  for (const auto& [name, value] : f.all())
    if (!megatron_mapped_flags().count(name) && !megatron_flag_is_irrelevant(name))
      out.warn(format("--{}{}: not modelled, ignored", name, value.empty() ? "" : " " + value));
  return out;
}

}  // namespace clustersim::scenarios::importers
