#include "scenarios/load_moe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace clustersim::scenarios {

void read_moe_parallel(const YamlReader& par, Scenario* sc) {
  auto& p = sc->parallel;
  const auto& moe = sc->model.moe;
  if (sc->model.mla.enabled() && p.cp > 1)
    par.fail("cp", "context parallelism with multi-head latent attention (model.mla) is not modelled; use cp: 1");
  if (!moe.enabled()) {
    for (const char* k : {"ep", "etp"})
      if (par.has(k)) par.fail(k, fmt::format("'{}' is a dense model (no model.moe); expert parallelism needs experts", sc->model.name));
    p.ep = 1, p.etp = 1;
    return;
  }
  p.ep = par.integer("ep", 1, 1, 1 << 20);
  p.etp = par.integer("etp", p.tp, 1, 1024);
  if (moe.experts % p.ep != 0)
    par.fail("ep", fmt::format("ep = {} must divide the model's {} routed experts", p.ep, moe.experts));
  if (moe.expert_ffn_hidden % p.etp != 0)
    par.fail("etp", fmt::format("etp = {} must divide the experts' ffn width {}", p.etp, moe.expert_ffn_hidden));
  const long fold = long(p.tp) * p.cp * p.dp;
  if (fold % (long(p.etp) * p.ep) != 0)
    par.fail(par.has("ep") ? "ep" : "etp",
             fmt::format("etp·ep = {}·{} = {} must divide tp·cp·dp = {} (experts fold over the ranks of a pipeline stage)",
                         p.etp, p.ep, long(p.etp) * p.ep, fold));
  // Megatron (TransformerConfig): "When using MoE and tensor parallelism, sequence parallelism
  // must be used" — each TP rank routes its own slice of the sequence.
  if (p.tp > 1 && !p.sequence_parallel)
    par.fail("sequence_parallel", fmt::format("an MoE model with tp = {} needs sequence_parallel: true (as Megatron requires)", p.tp));
}

namespace {

unsigned read_recompute_modules(const YamlReader& tr, const Scenario& sc) {
  const YAML::Node list = tr.node()["recompute_modules"];
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
    if (m == models::RecomputeModule::mla_up_proj && !sc.model.mla.enabled())
      tr.fail("recompute_modules", "'mla_up_proj' needs an MLA model (model.mla)");
    bits |= 1u << static_cast<unsigned>(m);
  }
  return bits;
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
  if (!sc->model.is_moe()) {
    for (const char* k : {"moe_dispatcher", "moe_load_imbalance", "moe_a2a_overlap"})
      if (tr.has(k)) tr.fail(k, fmt::format("'{}' is a dense model (no model.moe)", sc->model.name));
    return;
  }
  t.moe_dispatcher = static_cast<models::MoeDispatcher>(tr.choice(
      "moe_dispatcher", {std::begin(models::kMoeDispatcherNames), std::end(models::kMoeDispatcherNames)}, 0));
  t.moe_load_imbalance = 0;
  if (tr.has("moe_load_imbalance") && tr.text("moe_load_imbalance", "") != "auto")
    t.moe_load_imbalance = tr.number("moe_load_imbalance", 1, 1, 1000);  // "auto" or a number ≥ 1
  t.moe_a2a_overlap = tr.boolean("moe_a2a_overlap", false);
}

}  // namespace clustersim::scenarios
