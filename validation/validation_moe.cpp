#include "validation/validation_moe.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <optional>
#include <regex>
#include <tuple>
#include <vector>

#include "scenarios/load_model.hpp"
#include "validation/row_recipes.hpp"
#include "validation/validation_row.hpp"

namespace clustersim::studies {
namespace {

using Row = std::map<std::string, std::string>;
using namespace row_cells;

// The model preset (models/presets, from the model's HF config) of a row whose architecture the
// table names but does not spell out: the hybrid Mamba-Transformers' layer patterns and Mamba
// widths, DeepSeek-V4's per-layer compress ratios.
std::string row_preset(const Row& r) {
  const std::string name = field(r, "model_name");
  if (contains(name, "deepseek-v4-flash")) return "deepseek-v4-flash";
  if (contains(name, "nemotron 3 nano")) return "nemotron3-nano-30b-a3b";
  if (contains(name, "nemotron 3 super")) return "nemotron3-super-120b-a12b";
  if (contains(name, "nemotron 3 ultra")) return "nemotron3-ultra-550b-a55b";
  if (contains(name, "nemotron 3.5 lightning")) return "nemotron3.5-lightning-30b-a3b";
  return "";
}

// Why the row is outside the issue-15 scenario contract ("" when inside).
std::string outside_contract(const Row& r) {
  const std::string name = field(r, "model_name"), attn = field(r, "mla_details");
  const std::string pattern = field(r, "moe_layer_frequency");
  if ((contains(name, "mamba") || contains(attn, "mamba") || contains(pattern, "hybrid")) && row_preset(r).empty())
    return "hybrid Mamba-Transformer model without a public configuration (no preset)";
  if (contains(attn, "compress") && row_preset(r).empty())
    return "compressed / sparse attention (CSA, HCA) of a model without a preset";
  if (contains(name, "latentmoe") && row_preset(r).empty())
    return "latent MoE model without a preset (model.moe.latent_dim is modelled; its configuration is not in the "
           "table)";
  return "";
}

// "MLA: q_lora_rank=1536; kv_lora_rank=512; ..." or "head_dim=64; ..." → key → value.
std::map<std::string, long> attention_numbers(const std::string& text) {
  std::map<std::string, long> out;
  static const std::regex kv(R"(([a-z_]+)=(\d+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kv); it != std::sregex_iterator(); ++it)
    out[(*it)[1].str()] = std::stol((*it)[2].str());
  return out;
}

// The MoE layer pattern: after dense_layers, every frequency-th layer.
bool layer_frequency(const Row& r, RowScenario* out, long* frequency) {
  const std::string p = field(r, "moe_layer_frequency");
  *frequency = 1;
  if (p.empty()) return out->assumptions.push_back("moe_layer_frequency not stated: every layer after the dense ones"), true;
  if (contains(p, "every layer") || contains(p, "all layers after")) return true;
  out->reason = fmt::format("MoE layer pattern '{}' not expressible as dense_layers + frequency", p);
  return false;
}

// The table has no routing-group column: DeepSeek-V2/V3 route group-limited in every stack that
// publishes them (their HF configs; Megatron-Bridge's DeepSeek providers), so the preset's groups.
void routing_groups_patch(const std::string& name, long experts, RowScenario* out, scenarios::ScenarioPatch* y) {
  for (const char* family : {"deepseek-v3", "deepseek-v2"}) {
    const models::MoeSpec& preset = scenarios::model_preset(family).moe;
    if (!contains(name, family) || experts != preset.experts) continue;
    y->set("model.moe.router_groups", preset.router_groups)
        .set("model.moe.router_group_top_k", preset.router_group_top_k);
    out->assumptions.push_back(
        fmt::format("routing: {} of {} expert groups per token (the {} preset's group-limited routing)",
                    preset.router_group_top_k, preset.router_groups, family));
  }
}

}  // namespace

// README_moe: the MOE-* sources are the MoE rows, some (Nemotron 3 Super / Ultra) without an expert count.
bool is_moe_row(const Row& row) { return integer(row, "num_experts") > 1 || field(row, "id").rfind("MOE-", 0) == 0; }

bool moe_model_patch(const Row& r, RowScenario* out, scenarios::ScenarioPatch* y, long* layers_out) {
  auto assume = [&](std::string what) { out->assumptions.push_back(std::move(what)); };
  if (std::string why = outside_contract(r); !why.empty()) return out->reason = why, false;
  if (const std::string preset = row_preset(r); !preset.empty()) {
    y->set("model", preset);
    const models::ModelSpec spec = scenarios::model_preset(preset);
    *layers_out = spec.layers;
    out->assumptions.push_back(fmt::format("model: the {} preset (its HF config.json)", preset));
    if (spec.mtp_layers > 0 && family_of(field(r, "id")) == "MOE-MBRIDGE" && contains(preset, "nemotron")) {
      // Megatron-Bridge runs the one MTP block of the HF config twice (mtp_num_layers = 2 with
      // mtp_use_repeated_layer = True). Super: src/megatron/bridge/recipes/nemotronh/nemotron_3_super.py
      // at v0.4.2 and v0.5.1, perf_recipes/nemotronh/gb200/nemotronh.py at v0.6.0; Ultra:
      // recipes/nemotronh/h100/nemotron_3_ultra.py at v0.6.0; Nemotron 3.5 Lightning:
      // perf_recipes/nemotronh/gb200/nemotronh.py at v0.6.0. Two modules here: the same work;
      // their parameters counted twice (one block, in the memory only).
      y->set("model.mtp_layers", 2);
      out->assumptions.push_back(fmt::format(
          "MTP: the shared block run twice (Megatron-Bridge's {} recipes, mtp_num_layers 2)", field(r, "model_name")));
    }
    return true;
  }
  const std::string name = field(r, "model_name");
  const long layers = integer(r, "layers"), hidden = integer(r, "hidden"), heads = integer(r, "heads");
  const long experts = integer(r, "num_experts"), top_k = integer(r, "top_k"), expert_ffn = integer(r, "expert_ffn_hidden");
  const long vocab = integer(r, "vocab");
  if (!layers || !hidden || !heads || !top_k || !expert_ffn || !vocab)
    return out->reason = "architecture incomplete (layers/hidden/heads/top_k/expert_ffn_hidden/vocab blank)", false;
  long frequency = 1;
  if (!layer_frequency(r, out, &frequency)) return false;
  const long dense_layers = integer(r, "n_dense_layers");
  long ffn = integer(r, "dense_ffn_hidden");
  if (!ffn) ffn = expert_ffn;  // no dense layer uses it (the presets write the expert width too)
  *layers_out = layers;

  y->set("model.name", name).set("model.layers", layers).set("model.hidden", hidden).set("model.heads", heads);
  const std::string attn = field(r, "mla_details");
  const auto nums = attention_numbers(attn);
  if (attn.rfind("MLA:", 0) == 0) {
    for (const char* k : {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
      if (!nums.count(k)) return out->reason = fmt::format("mla_details lacks {}", k), false;
    for (const char* k : {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
      y->set(std::string("model.mla.") + k, nums.at(k));
  } else {
    long kv_heads = integer(r, "kv_heads");
    if (!kv_heads) kv_heads = heads, assume("kv_heads not stated: heads (multi-head attention)");
    y->set("model.kv_heads", kv_heads);
    if (nums.count("head_dim")) y->set("model.head_dim", nums.at("head_dim"));
  }
  static const std::regex window(R"((\d+)-token sliding-window)");
  std::smatch m;
  if (std::regex_search(attn, m, window)) {
    if (!contains(attn, "alternating")) return out->reason = "sliding-window layer pattern not stated", false;
    y->set("model.sliding_window.tokens", scenarios::value_of(m[1].str())).set("model.sliding_window.every", 2);
  }
  // Architecture conventions every model of the table shares (their HF configs): SwiGLU experts,
  // RMSNorm, RoPE, untied embeddings; GPT-OSS alone has biases (model card: attention_bias true).
  const bool biased = contains(name, "gpt-oss");
  y->set("model.ffn_hidden", ffn).set("model.vocab", vocab).set("model.activation", "swiglu").set("model.norm", "rmsnorm");
  y->set("model.position", "rope").set("model.tied_embeddings", false).set("model.bias", biased).set("model.dropout", 0);
  y->set("model.moe.experts", experts).set("model.moe.top_k", top_k).set("model.moe.shared_experts", integer(r, "shared_experts"));
  y->set("model.moe.expert_ffn_hidden", expert_ffn).set("model.moe.dense_layers", dense_layers).set("model.moe.frequency", frequency);
  routing_groups_patch(name, experts, out, y);
  const std::string mtp = lower(field(r, "mtp"));
  // The column says "yes (...)", "no (...)" or a module count ("1" in the 26.08 DeepSeek-V3 rows).
  const bool count = !mtp.empty() && mtp.find_first_not_of("0123456789") == std::string::npos;
  if (mtp.rfind("yes", 0) == 0) y->set("model.mtp_layers", 1);
  else if (count && std::stol(mtp) > 0) y->set("model.mtp_layers", std::stol(mtp));
  else if (mtp.empty() && contains(name, "deepseek-v3")) {
    // Megatron-Bridge's DeepSeek-V3 recipe keeps the model's one MTP module at every tag read
    // (mtp_num_layers=1: v0.1.0rc4 recipes/deepseek/deepseek_v3.py model_config, v0.2.0, v0.4.2,
    // v0.5.0 and v0.6.0; docs/reference/validation/mbridge_recipe_audit_2026-12.md).
    const bool bridge = family_of(field(r, "id")) == "MOE-MBRIDGE";
    if (bridge) y->set("model.mtp_layers", 1);
    assume(bridge ? "MTP not stated: 1 module (Megatron-Bridge's DeepSeek-V3 recipes, mtp_num_layers=1)"
                  : "MTP not stated: no MTP module");
  }
  return true;
}

// NeMo AutoModel's GPT-OSS rows publish EP as '-' though they list DeepEP. The benchmark page
// (docs/performance-summary.md, commit 89e3a9fd, 2025-10-06) ran the configs of that date:
// examples/benchmark/configs/gptoss_120b_te_deepep.yaml ep_size 16 and gptoss_20b_te_deepep.yaml
// ep_size 8 at commit 79d0ccfd (2025-10-02), the last version before the page (120B became 64 on
// 2025-10-08). 0 when not known.
long automodel_ep(const Row& r) {
  if (family_of(field(r, "id")) != "MOE-AUTOMODEL") return 0;
  const std::string model = lower(field(r, "model_name"));
  if (contains(model, "gpt-oss-120b")) return 16;
  if (contains(model, "gpt-oss-20b")) return 8;
  return 0;
}

scenarios::ScenarioPatch moe_parallel_patch(const Row& r, RowScenario* out) {
  long ep = integer(r, "ep");
  if (!ep && (ep = automodel_ep(r)))
    out->assumptions.push_back(fmt::format("ep not stated: {} (NeMo AutoModel benchmark config of the page's date)", ep));
  if (!ep) ep = 1, out->assumptions.push_back("ep not stated: 1");
  scenarios::ScenarioPatch y;
  y.set("parallelism.ep", ep);
  const long tp = std::max(1L, integer(r, "tp")), pp = std::max(1L, integer(r, "pp")), cp = std::max(1L, integer(r, "cp"));
  const long fold = integer(r, "num_gpus") / (pp * cp) * cp;  // tp·cp·dp of one stage
  if (const long etp = integer(r, "etp")) {
    y.set("parallelism.etp", etp);
  } else if (tp > 1 && fold > 0 && fold % (tp * ep) != 0 && fold % ep == 0) {
    // The run existed, and Megatron's default etp = tp would not fold: it must have used etp 1.
    y.set("parallelism.etp", 1);
    out->assumptions.push_back(fmt::format("etp not stated: 1 (the default etp = tp = {} does not fold with ep {})", tp, ep));
  } else if (tp > 1) {
    out->assumptions.push_back("etp not stated: the loader's default (Megatron's etp = tp)");
  }
  return y;
}

namespace {

// The container release "YY.MM" of a Megatron-Bridge row as YY·100 + MM; 0 when not stated.
int release_of(const Row& r) {
  const std::array<int, 3> release = container_release(field(r, "framework"));
  return release[0] * 100 + release[1];
}

// The dispatcher of the release's recipe for a row that leaves it blank, where every recipe of that
// model, GPU and release sets one (the flex dispatcher): Megatron-Bridge's DeepSeek-V3
// B200 and B300 recipes at v0.4.1 and v0.5.0 (26.04, 26.06: deepseek_workload_base_configs.py
// DEEPSEEK_V3_PRETRAIN_CONFIG_B200_V1 / _B300_V1 and their V2 variants, "hybridep") and B200 at
// v0.6.0 (26.08: perf_recipes/deepseek/b200/deepseek_v3.py, "deepep"); v0.2.0 (25.11) sets none
// for B200 (alltoall). Returns the flex backend ("hybridep" or "deepep", the dispatcher of the
// same name); "" when not known.
std::string recipe_flex_backend(const Row& r) {
  const std::string gpu = field(r, "gpu_type");
  if (family_of(field(r, "id")) != "MOE-MBRIDGE" || !contains(field(r, "model_name"), "deepseek-v3") ||
      !field(r, "dispatcher").empty() || contains(gpu, "gb"))
    return "";
  const int release = release_of(r);
  if (contains(gpu, "b200") && release >= 2608) return "deepep";
  if ((contains(gpu, "b200") || contains(gpu, "b300")) && release >= 2604 && release <= 2606) return "hybridep";
  return "";
}

// The host-side MoE recipe of a Megatron-Bridge row (the kernel counts and graph capture of
// models/moe_host.hpp): its router and permute fusion and its CUDA-graph scope, as the
// performance recipes set them (github.com/NVIDIA-NeMo/Megatron-Bridge, src/megatron/bridge/
// perf_recipes/): moe_router_fusion = True in deepseek/common.py set_deepseek_v3_common_configs,
// qwen/common.py set_qwen3_specific_overrides and the kimi recipes; moe_permute_fusion = True
// from the DeepSeek and Qwen3 MoE model providers (recipes' "default from Qwen3MoEModelProvider");
// graph scopes at 067f987d (tests/validation/VALIDATION.md, "Search for a measured host cost"):
// DeepSeek-V3 GB200 and Qwen3 MoE B200/GB200 [attn, moe_router, moe_preprocess], Qwen3 MoE B300
// [moe_router, moe_preprocess], GPT-OSS-120B GB200/GB300 full_iteration (gpt_oss/common.py
// _apply_gpt_oss_120b_full_iter_fp8mx_configs), GPT-OSS B300 [attn, moe_router, moe_preprocess],
// none elsewhere. GPT-OSS-120B runs both fusions at every tag read (v0.2.2, v0.3.1, v0.4.2, v0.5.1):
// moe_router_fusion = True in scripts/performance/configs/gpt_oss/gpt_oss_llm_pretrain.py
// set_gpt_oss_common_configs, moe_permute_fusion = True in src/megatron/bridge/recipes/gpt_oss/
// gpt_oss.py (only the 20B's perf defaults turn both off). The
// recipes are those of the commits read, applied to every release of the row's model and GPU,
// except where a row's notes quote its own release's recipe ("CUDA graphs: full_iteration",
// "router fusion on", "permute fusion on": the 26.06.x rows from tags v0.5.0/v0.5.1 and the 26.08
// rows from v0.6.0, perf_recipes/*/common.py _enable_*_full_iteration_*).
// The CUDA-graph scope a row's notes quote from its release's recipe ("CUDA graphs:
// transformer_engine scope=['attn', 'mamba', ...]", "CUDA graphs: none ..."), as the simulator's
// scope list; empty when the notes quote none.
std::optional<std::vector<std::string>> quoted_graph_scope(const std::string& notes) {
  static const std::regex re(R"(CUDA graphs: (\w+) scope=\[([^\]]*)\])");
  std::smatch m;
  if (!std::regex_search(notes, m, re) || m[1] == "full_iteration") return std::nullopt;
  if (m[1] == "none") return std::vector<std::string>{};
  std::vector<std::string> kept;
  for (const char* name : {"attn", "mamba", "moe_router", "moe_preprocess"})
    if (m[2].str().find(std::string("'") + name + "'") != std::string::npos) kept.push_back(name);
  return kept;
}

void recipe_host(const Row& r, std::vector<std::string>* assumptions, scenarios::ScenarioPatch* y) {
  if (family_of(field(r, "id")) != "MOE-MBRIDGE") return;
  const std::string gpu = field(r, "gpu_type"), model = field(r, "model_name");
  const bool dsv3 = contains(model, "deepseek-v3"), qwen3 = contains(model, "qwen3"), kimi = contains(model, "kimi");
  const bool gptoss = contains(model, "gpt-oss");
  const bool gb200 = contains(gpu, "gb200"), gb300 = contains(gpu, "gb300");
  const bool b300 = contains(gpu, "b300") && !gb300, b200 = contains(gpu, "b200") && !gb200;
  // A row whose notes quote its release's recipe (read from that tag) says it; else the table.
  const std::string notes = field(r, "notes");
  const bool gptoss120 = gptoss && contains(model, "120b");
  const bool router = dsv3 || qwen3 || kimi || gptoss120 || contains(notes, "router fusion on");
  const bool permute = dsv3 || qwen3 || gptoss120 || contains(notes, "permute fusion on");
  if (router) y->set("training.moe_router_fusion", true);
  if (permute) y->set("training.moe_permute_fusion", true);
  const auto quoted = quoted_graph_scope(notes);
  const bool own_scope = row_recipe_sets(field(r, "id"), "training.cuda_graph_scope");  // data/validation/row_recipes.csv
  std::vector<std::string> scope;
  if (own_scope) scope = {};
  else if (contains(notes, "cuda graphs: full_iteration")) scope = {"full_iteration"};
  else if (quoted) scope = *quoted;
  else if ((dsv3 && gb200) || (qwen3 && (b200 || gb200)) || (gptoss && b300)) scope = {"attn", "moe_router", "moe_preprocess"};
  else if (qwen3 && b300) scope = {"moe_router", "moe_preprocess"};
  else if (gptoss120 && (gb200 || gb300)) scope = {"full_iteration"};
  if (!scope.empty()) y->set("training.cuda_graph_scope", scenarios::PatchList(scope.begin(), scope.end()));
  if (router || permute || !scope.empty())
    assumptions->push_back(fmt::format("MoE host recipe (Megatron-Bridge perf recipes): {}{}{}",
                                       router ? "router fusion" : "no router fusion", permute ? ", permute fusion" : "",
                                       own_scope       ? ""
                                       : scope.empty() ? ", no CUDA graphs"
                                                       : fmt::format(", cuda_graph_scope [{}]", fmt::join(scope, ", "))));
}

}  // namespace

scenarios::ScenarioPatch moe_training_patch(const Row& r, const FamilyConventions& conv, RowScenario* out) {
  auto assume = [&](std::string what) { out->assumptions.push_back(std::move(what)); };
  const std::string d = field(r, "dispatcher");
  std::string dispatcher = conv.moe_dispatcher;
  const std::string recipe = recipe_flex_backend(r);
  // DeepEP and Hybrid-EP (Megatron's flex dispatcher backends) and DeepSeek's own IB+NVLink
  // kernels (DeepSeek-V3 §3.2.2, open-sourced as DeepEP) are the fused-kernel dispatcher.
  if (contains(d, "hybridep")) dispatcher = "hybridep";
  else if (contains(d, "deepep") || contains(d, "custom ib+nvlink")) dispatcher = "deepep";
  else if (contains(d, "all-to-all") || contains(d, "alltoall")) dispatcher = "alltoall";
  else if (contains(d, "allgather")) dispatcher = "allgather";
  else if (!recipe.empty())
    dispatcher = recipe,
    assume(fmt::format(
        "MoE dispatcher not stated: the release's DeepSeek-V3 recipes' flex dispatcher, {} (Megatron-Bridge)", recipe));
  else assume(fmt::format("MoE dispatcher not stated: {} (the stack's default)", dispatcher));
  scenarios::ScenarioPatch y;
  y.set("training.moe_dispatcher", dispatcher);
  // Megatron-Bridge's perf harness gives HybridEP 32 SMs for every hybridep recipe
  // (scripts/performance/utils/helpers.py at v0.2.0, utils/overrides.py v0.3.0 to v0.5.0,
  // perf_recipes/_common.py _benchmark_common at v0.6.0); recipes that set another count after it
  // are rows of data/validation/row_recipes.csv.
  const bool own_dispatcher = row_recipe_sets(field(r, "id"), "training.moe_dispatcher");  // its release ran another
  if (family_of(field(r, "id")) == "MOE-MBRIDGE" && !own_dispatcher &&
      (contains(d, "hybridep") || (d.empty() && recipe == "hybridep"))) {
    y.set("training.moe_dispatcher_sms", 32);
    assume("HybridEP on 32 SMs (Megatron-Bridge's perf harness override of moe_hybridep_num_sms)");
  }
  if (contains(d, "a2a overlap on")) y.set("training.moe_a2a_overlap", true);
  // README_moe caveat 1: Megatron-Bridge's (tokendrop) rows route for real; the others of the
  // family are force-balanced (the family convention).
  std::string imbalance = conv.moe_load_imbalance;
  if (contains(field(r, "source"), "(tokendrop)")) {
    imbalance = "auto";
    assume("token-dropping run with real routing: load imbalance auto, dropless (capacity factor not published)");
  }
  y.set("training.moe_load_imbalance", scenarios::value_of(imbalance));
  if (!conv.moe_permute_fusion.empty()) {
    const bool fused = conv.moe_permute_fusion == "true";
    y.set("training.moe_permute_fusion", fused);
    assume(fmt::format("{} permute (the stack's token dispatcher)", fused ? "fused (Transformer Engine)" : "PyTorch"));
  }
  recipe_host(r, &out->assumptions, &y);
  if (const RecipeRecompute rec = recipe_recompute(r);
      !rec.mode.empty() && !row_recipe_sets(field(r, "id"), "training.recompute_modules"))
    assume(fmt::format("recompute not stated: {}{} ({})", rec.mode,
                       rec.modules.empty() ? "" : fmt::format(" [{}]", fmt::join(rec.modules, ", ")), rec.source));
  return y;
}


RecipeRecompute recipe_recompute(const Row& r) {
  const std::string gpu = field(r, "gpu_type"), model = field(r, "model_name"), rc = field(r, "recompute");
  const std::string family = family_of(field(r, "id"));
  // NeMo AutoModel's benchmark configs (examples/benchmark/configs/): activation_checkpointing: true
  // in every version of deepseek_v3_te_deepep.yaml (256 GPUs), deepseek_v3_te_deepep_1024.yaml (from
  // its first version, 2c236e08, 2025-10-08, to its key's removal on 2026-02-12), kimi_k2,
  // qwen3_moe_30b, nemotron_nano_v3 (bb0c0bfb, 2026-02-26 on), nemotron_super_v3 (c0e4fe1b,
  // 2026-03-11 on) and llm_benchmark/nemotron/nemotron_ultra_v3_te_deepep.yaml (cb976544,
  // 2026-06-12 on); gptoss_20b true at 79d0ccfd (2025-10-02), the version the page of 2025-10-06 ran
  // (false from 2025-11-10); gptoss_120b false. apply_ac (components/moe/parallelizer.py) wraps every
  // block in PyTorch's checkpoint_wrapper: full recompute.
  if (family == "MOE-AUTOMODEL" && (rc.empty() || contains(rc, "not stated"))) {
    const bool ac = contains(model, "deepseek-v3") || contains(model, "kimi k2") || contains(model, "qwen3-30b") ||
                    contains(model, "nemotron 3 nano") || contains(model, "nemotron 3 super") ||
                    contains(model, "nemotron 3 ultra") || contains(model, "gpt-oss-20b");
    if (ac) return {"full", {}, "NeMo AutoModel benchmark config: activation_checkpointing: true"};
    return {};
  }
  // Megatron-Bridge's DeepSeek-V3 performance recipes always set recompute_granularity selective;
  // the modules by release and GPU:
  // - 25.09 (v0.1.0rc4 scripts/performance/run_script.py main, set per GPU after the yaml):
  //   ["mla_up_proj", "mlp"] on H100, ["mla_up_proj"] on B200 and on GB200 (token drop, its default);
  // - 25.11 on (v0.2.0 deepseek/workload_base_configs.py, v0.4.1 deepseek_workload_base_configs.py,
  //   v0.6.0 perf_recipes/deepseek/{b200,gb200}/deepseek_v3.py): the same, B300 as B200.
  // GB300 is left out (its recipes change modules by precision and some list none).
  if (family != "MOE-MBRIDGE" || !contains(model, "deepseek-v3") || !rc.empty() || contains(gpu, "gb300")) return {};
  const int release = release_of(r);
  if (release < 2509) return {};
  if (contains(gpu, "h100")) return {"selective", {"mla_up_proj", "mlp"}, "Megatron-Bridge DeepSeek-V3 H100 recipes (25.09 on)"};
  return {"selective", {"mla_up_proj"}, "Megatron-Bridge DeepSeek-V3 Blackwell recipes (25.09 on)"};
}

std::vector<std::string> moe_recompute_modules(const Row& r) {
  const std::string rc = field(r, "recompute");
  std::vector<std::string> modules;
  if (const RecipeRecompute recipe = recipe_recompute(r); !recipe.mode.empty()) return recipe.modules;
  if (rc.rfind("selective:", 0) == 0) {
    std::string list = rc.substr(10);
    std::string cur;
    for (char c : list + ",") {
      if (c == ',') {
        if (!cur.empty()) modules.push_back(cur);
        cur.clear();
      } else if (c != ' ') {
        cur += c;
      }
    }
  } else if (contains(rc, "rmsnorm") && contains(rc, "mla up-projection")) {
    modules = {"layernorm", "mla_up_proj"};  // DeepSeek-V3 §3.2.3, in Megatron's module names
  }
  return modules;
}

std::vector<ReleasedRow> released_rows(const CsvTable& table) {
  std::vector<ReleasedRow> out;
  for (const auto& row : table.rows) {
    const std::array<int, 3> release = container_release(field(row, "framework"));
    if (!is_moe_row(row) || release[0] == 0) continue;
    const std::string id = field(row, "id");
    const std::string model = field(row, "model_name"), gpu = field(row, "gpu_type"), gpus = field(row, "num_gpus");
    const std::string precision = precision_class(field(row, "precision")), seq = field(row, "seq_len");
    const std::string batch = field(row, "global_batch");
    out.push_back({id, fmt::format("{}|{}|{}|{}|{}|{}|{}", family_of(id), model, gpu, gpus, precision, seq, batch),
                   fmt::format("{}, {} x {}, {}, seq {}, batch {}", model, gpus, gpu, precision, seq, batch),
                   fmt::format("tp{} pp{} ep{} cp{} vpp{} mb{}", field(row, "tp"), field(row, "pp"), field(row, "ep"),
                               field(row, "cp"), field(row, "vpp"), field(row, "micro_batch")),
                   release});
  }
  return out;
}

std::map<std::string, std::string> superseded_rows(const CsvTable& table) { return superseded_rows(released_rows(table)); }

std::map<std::string, std::string> superseded_rows(const std::vector<ReleasedRow>& rows) {
  std::map<std::string, const ReleasedRow*> newest;  // configuration → its latest release's row
  for (const ReleasedRow& r : rows) {
    auto it = newest.find(r.configuration);
    if (it == newest.end() || r.release > it->second->release) newest[r.configuration] = &r;
  }
  std::map<std::string, std::string> out;
  for (const ReleasedRow& r : rows)
    if (newest.at(r.configuration)->id != r.id) out[r.id] = newest.at(r.configuration)->id;
  return out;
}

}  // namespace clustersim::studies
