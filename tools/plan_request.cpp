#include "tools/plan_request.hpp"

#include <fmt/format.h>

#include "scenarios/error.hpp"
#include "scenarios/quantity.hpp"
#include "studies/plan_batch.hpp"
#include "studies/sweep_space.hpp"
#include "tools/sweep_request.hpp"

namespace clustersim::tools {

namespace {

// A whole-number option that is either absent (its default) or at least `lo`.
int at_least(const std::optional<int>& v, int lo, const char* option, const char* unit) {
  if (!v) return 0;
  if (*v < lo) throw scenarios::ScenarioError(fmt::format("{} {}: expected a whole number of {} >= {} (omit it for the default)",
                                                          option, *v, unit, lo));
  return *v;
}

// --hardware h100-sxm,b200 and ["h100-sxm", "b200"] alike: every comma-separated name.
std::vector<std::string> hardware_names(const std::vector<std::string>& given) {
  std::vector<std::string> out;
  for (const auto& g : given) {
    std::size_t start = 0;
    for (std::size_t i = 0; i <= g.size(); ++i)
      if (i == g.size() || g[i] == ',') {
        if (i > start) out.push_back(g.substr(start, i - start));
        start = i + 1;
      }
  }
  return out;
}

}  // namespace

studies::PlanRequest plan_request(const PlanOptions& o) {
  studies::PlanRequest req;
  req.model = o.model;
  std::string why;
  const auto tokens = scenarios::parse_quantity(o.tokens, scenarios::Dimension::count, &why);
  if (!tokens || *tokens <= 0)
    throw scenarios::ScenarioError(fmt::format("--tokens {}: expected a positive number such as 15e12 or 15T", o.tokens));
  req.tokens = *tokens;
  req.hardware = hardware_names(o.hardware);
  req.days = o.days;
  req.seq_len = o.seq_len;
  req.global_batch = at_least(o.global_batch, 1, "--global-batch", "sequences");
  if (!o.batch_tokens.empty()) {
    const auto range = studies::parse_batch_tokens(o.batch_tokens);
    req.batch_tokens_lo = range.lo, req.batch_tokens_hi = range.hi;
  }
  if (!o.prices.empty()) req.prices = studies::parse_gpu_hour_prices(o.prices);
  req.cost_per_gpu_hour = o.cost_per_gpu_hour;
  req.energy = o.energy;
  req.rank = studies::parse_plan_rank(o.by);
  req.max_vpp = o.max_vpp;
  req.schedules = studies::parse_schedules(o.schedules, "--schedules " + o.schedules);
  req.confidence = o.confidence;
  req.max_gpus = at_least(o.max_gpus, 1, "--max-gpus", "GPUs");
  req.gpu_step = at_least(o.gpu_step, 1, "--gpu-step", "GPUs");
  req.fixes = o.fixes;
  if (o.top < 0) throw scenarios::ScenarioError(fmt::format("--top {}: expected a number of plans >= 0", o.top));
  req.top = static_cast<std::size_t>(o.top);
  check_threads(o.threads);
  req.threads = o.threads;
  return req;
}

std::string no_plan_message(const studies::PlanRequest& request) {
  return fmt::format("no plan meets {:g} days", request.days);
}

}  // namespace clustersim::tools
