#include "scenarios/load_moe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "scenarios/plan_rules.hpp"

namespace clustersim::scenarios {

void read_moe_parallel(const YamlReader& par, Scenario* sc) {
  auto& p = sc->parallel;
  const auto& moe = sc->model.moe;
  if (const std::string why = cp_refusal(sc->model, p.cp); !why.empty()) par.fail("cp", why);
  if (!moe.enabled()) {
    for (const char* k : {"ep", "etp"})
      if (par.has(k)) par.fail(k, fmt::format("'{}' is a dense model (no model.moe); expert parallelism needs experts", sc->model.name));
    p.ep = 1, p.etp = 1;
    return;
  }
  p.ep = par.integer("ep", 1, 1, 1 << 20);
  p.etp = par.integer("etp", p.tp, 1, 1024);
  if (const std::string why = ep_refusal(p.ep, moe.experts); !why.empty()) par.fail("ep", why);
  if (const std::string why = etp_refusal(p.etp, moe.expert_ffn_hidden); !why.empty()) par.fail("etp", why);
  const long fold = long(p.tp) * p.cp * p.dp;
  if (const std::string why = expert_fold_refusal(p.ep, p.etp, fold); !why.empty()) par.fail(par.has("ep") ? "ep" : "etp", why);
  // Megatron (TransformerConfig): "When using MoE and tensor parallelism, sequence parallelism
  // must be used" — each TP rank routes its own slice of the sequence. Not given: on, stated.
  if (p.tp > 1 && !p.sequence_parallel) {
    if (par.has("sequence_parallel"))
      par.fail("sequence_parallel", fmt::format("an MoE model with tp = {} needs sequence_parallel: true (as Megatron requires)", p.tp));
    p.sequence_parallel = true;
    sc->sequence_parallel_assumed = true;
  }
}

namespace {

unsigned read_recompute_modules(const YamlReader& tr, const Scenario& sc) {
  const YAML::Node list = tr.raw("recompute_modules");
  if (!list.IsSequence()) tr.fail("recompute_modules", "expected a list, e.g. [core_attn, moe_act]");
  std::vector<std::string> names(std::begin(models::kRecomputeModuleNames), std::end(models::kRecomputeModuleNames));
  unsigned bits = 0;
  for (const auto& item : list) {
    const std::string v = item.IsScalar() ? item.Scalar() : "?";
    auto it = std::find(names.begin(), names.end(), v);
    if (it == names.end()) {
      const std::string near = nearest(v, names);
      tr.fail("recompute_modules", fmt::format("unknown module '{}'{}; allowed: {}", v,
                                               near.empty() ? "" : " (did you mean '" + near + "'?)", join(names)));
    }
    const auto m = static_cast<models::RecomputeModule>(it - names.begin());
    const bool moe_only = m == models::RecomputeModule::moe || m == models::RecomputeModule::moe_act ||
                          m == models::RecomputeModule::shared_experts;
    if (moe_only && !sc.model.is_moe()) tr.fail("recompute_modules", fmt::format("'{}' needs an MoE model (model.moe)", v));
    if (m == models::RecomputeModule::mhc && !sc.model.hyper_connections.enabled())
      tr.fail("recompute_modules", "'mhc' needs hyper-connections (model.hyper_connections)");
    if (m == models::RecomputeModule::mla_up_proj && !sc.model.mla.enabled() &&
        !sc.model.compressed_attention.enabled())
      tr.fail("recompute_modules",
              "'mla_up_proj' needs an MLA model (model.mla) or DeepSeek-V4's (model.compressed_attention)");
    bits |= 1u << static_cast<unsigned>(m);
  }
  const unsigned mhc_and_mlp =
      1u << unsigned(models::RecomputeModule::mhc) | 1u << unsigned(models::RecomputeModule::mlp);
  if ((bits & mhc_and_mlp) == mhc_and_mlp)
    tr.fail("recompute_modules", "'mhc' and 'mlp' cannot be given together (Megatron-Core refuses them)");
  return bits;
}

// training.cuda_graph_scope: Megatron's --cuda-graph-scope names (partial graphs of
// --cuda-graph-impl transformer_engine, Megatron-LM guide "DeepSeek-V3 on GB200" §2.3), or
// [full_iteration] (the whole step, as cuda_graphs: true).
void read_graph_scope(const YamlReader& tr, Scenario* sc) {
  auto& t = sc->training;
  const YAML::Node list = tr.raw("cuda_graph_scope");
  std::vector<std::string> names(std::begin(models::kGraphScopeNames), std::end(models::kGraphScopeNames));
  names.emplace_back("full_iteration");
  const std::string allowed = join(names);
  if (!list.IsSequence()) tr.fail("cuda_graph_scope", "expected a list, e.g. [attn, moe_router, moe_preprocess]; allowed: " + allowed);
  unsigned bits = 0;
  bool full = false;
  for (const auto& item : list) {
    const std::string v = item.IsScalar() ? item.Scalar() : "?";
    if (v == "moe")
      tr.fail("cuda_graph_scope", "'moe' (the whole MoE layer, token-drop with padding only) is not modelled; allowed: " + allowed);
    auto it = std::find(names.begin(), names.end(), v);
    if (it == names.end()) {
      const std::string near = nearest(v, names);
      tr.fail("cuda_graph_scope", fmt::format("unknown scope '{}'{}; allowed: {}", v,
                                              near.empty() ? "" : " (did you mean '" + near + "'?)", allowed));
    }
    if (v == "full_iteration") {
      full = true;
      continue;
    }
    const auto g = static_cast<models::GraphScope>(it - names.begin());
    if ((g == models::GraphScope::moe_router || g == models::GraphScope::moe_preprocess) && !sc->model.is_moe())
      tr.fail("cuda_graph_scope", fmt::format("'{}' needs an MoE model (model.moe)", v));
    if (g == models::GraphScope::mamba && sc->model.mixer_count(models::Mixer::mamba) == 0)
      tr.fail("cuda_graph_scope", "'mamba' needs a model with Mamba layers (model.layer_pattern)");
    bits |= 1u << static_cast<unsigned>(g);
  }
  if (full && bits != 0) tr.fail("cuda_graph_scope", "full_iteration captures the whole step; list it alone");
  auto has = [&](models::GraphScope g) { return (bits >> static_cast<unsigned>(g) & 1u) != 0; };
  if (has(models::GraphScope::moe_preprocess) && !has(models::GraphScope::moe_router))
    tr.fail("cuda_graph_scope", "'moe_preprocess' must be used with 'moe_router' (as Megatron requires)");
  if (tr.has("cuda_graphs") && t.cuda_graphs != full)
    tr.fail("cuda_graph_scope", fmt::format("cuda_graphs: {} contradicts the scope; give one of the two ([full_iteration] is "
                                            "cuda_graphs: true)", t.cuda_graphs ? "true" : "false"));
  if (full) t.cuda_graphs = true, t.assumed.cuda_graphs = false;
  t.cuda_graph_scope = bits;
  if (bits != 0) t.assumed.cuda_graphs = false;
}

// training.moe_grouped_gemm. DeepGEMM is an sm90 kernel for FP8 with DeepSeek's 1x128/128x128
// block scales (deepseek-ai/DeepGEMM README); its measured rows are H800 ones (kernel_gemm.csv).
void read_grouped_gemm(const YamlReader& tr, const Scenario& sc, models::TrainingSpec* t) {
  t->moe_grouped_gemm = static_cast<hardware::GroupedGemmKernel>(tr.choice(
      "moe_grouped_gemm", {std::begin(hardware::kGroupedGemmKernelNames), std::end(hardware::kGroupedGemmKernelNames)}, 0));
  t->assumed.moe_grouped_gemm = !tr.has("moe_grouped_gemm");
  if (t->moe_grouped_gemm != hardware::GroupedGemmKernel::deepgemm) return;
  if (t->precision != hardware::Precision::fp8 || t->fp8_recipe != models::Fp8Recipe::blockwise)
    tr.fail("moe_grouped_gemm", fmt::format("deepgemm runs FP8 with 1x128 block scales: it needs precision: fp8 and "
                                            "fp8_recipe: blockwise (here {}{}); allowed: cutlass",
                                            hardware::name(t->precision),
                                            t->precision == hardware::Precision::fp8
                                                ? std::string(", ") + models::name(t->fp8_recipe) : std::string()));
  if (sc.gpu.die != "gh100")
    tr.fail("moe_grouped_gemm", fmt::format("deepgemm is measured on Hopper (sm90: h100-sxm, h800, h200-sxm), not {} "
                                            "(die {}); allowed: cutlass", sc.gpu.name, sc.gpu.die));
}

// The SMs DeepEP / HybridEP kernels hold (Megatron --moe-deepep-num-sms, --moe-hybridep-num-sms).
void read_dispatcher_sms(const YamlReader& tr, const Scenario& sc, models::TrainingSpec* t) {
  t->assumed.moe_dispatcher_sms = !tr.has("moe_dispatcher_sms");
  const int fallback = models::TrainingSpec::default_dispatcher_sms(t->moe_dispatcher);
  t->moe_dispatcher_sms = fallback;
  if (!tr.has("moe_dispatcher_sms")) return;
  if (!models::uses_ep_kernels(t->moe_dispatcher))
    tr.fail("moe_dispatcher_sms",
            fmt::format("sets the SMs of the DeepEP / HybridEP kernels (moe_dispatcher: deepep or "
                        "hybridep); the {} dispatcher's NCCL exchanges take the profile's comm_sms ({})",
                        models::name(t->moe_dispatcher), sc.gpu.comm_sms));
  t->moe_dispatcher_sms = tr.integer("moe_dispatcher_sms", fallback, 1, sc.gpu.sms - 1);
}

}  // namespace

void read_moe_training(const YamlReader& tr, Scenario* sc) {
  auto& t = sc->training;
  if (tr.has("recompute_modules")) {
    if (t.recompute != models::Recompute::selective)
      tr.fail("recompute_modules", fmt::format("applies to recompute: selective (Megatron --recompute-granularity "
                                               "selective), but recompute is {}", models::name(t.recompute)));
    t.recompute_modules = read_recompute_modules(tr, *sc);
  } else if (t.recompute == models::Recompute::selective) {
    t.recompute_modules = 1u << static_cast<unsigned>(models::RecomputeModule::core_attn);  // Megatron's default
  }
  if (tr.has("cuda_graph_scope")) read_graph_scope(tr, sc);
  if (!sc->model.is_moe()) {
    for (const char* k : {"moe_dispatcher", "moe_load_imbalance", "moe_a2a_overlap", "moe_router_fusion",
                          "moe_permute_fusion", "moe_grouped_gemm", "moe_dispatcher_sms"})
      if (tr.has(k)) tr.fail(k, fmt::format("'{}' is a dense model (no model.moe)", sc->model.name));
    return;
  }
  t.moe_dispatcher = static_cast<models::MoeDispatcher>(tr.choice(
      "moe_dispatcher", {std::begin(models::kMoeDispatcherNames), std::end(models::kMoeDispatcherNames)}, 0));
  t.moe_load_imbalance = 0;
  if (tr.has("moe_load_imbalance") && tr.text("moe_load_imbalance", "") != "auto")
    t.moe_load_imbalance = tr.number("moe_load_imbalance", 1, 1, 1000);  // "auto" or a number ≥ 1
  // DualPipeV's F/B pairs overlap one micro-batch's exchanges with another's compute by design.
  const bool dualpipe = sc->parallel.schedule == models::PipelineSchedule::dualpipev;
  t.moe_a2a_overlap = tr.boolean("moe_a2a_overlap", dualpipe);
  if (dualpipe && !t.moe_a2a_overlap)
    tr.fail("moe_a2a_overlap", "false contradicts parallelism.schedule dualpipev, whose forward/backward pairs overlap "
                               "the dispatch and combine; allowed: true");
  t.assumed.moe_dispatcher = !tr.has("moe_dispatcher");
  t.assumed.moe_load_imbalance = !tr.has("moe_load_imbalance");
  t.assumed.moe_a2a_overlap = !tr.has("moe_a2a_overlap");
  // Megatron-Core's defaults: both off (TransformerConfig moe_router_fusion, moe_permute_fusion).
  t.moe_router_fusion = tr.boolean("moe_router_fusion", false);
  t.assumed.moe_router_fusion = !tr.has("moe_router_fusion");
  t.moe_permute_fusion = tr.boolean("moe_permute_fusion", false);
  t.assumed.moe_permute_fusion = !tr.has("moe_permute_fusion");
  read_grouped_gemm(tr, *sc, &t);
  read_dispatcher_sms(tr, *sc, &t);
}

}  // namespace clustersim::scenarios
