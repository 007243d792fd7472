#include "tools/plan_request.hpp"

#include <fmt/format.h>

#include "scenarios/error.hpp"
#include "scenarios/quantity.hpp"
#include "studies/plan_batch.hpp"
#include "studies/sweep_space.hpp"

namespace clustersim::tools {

studies::PlanRequest plan_request(const PlanOptions& o) {
  studies::PlanRequest req;
  req.model = o.model;
  std::string why;
  const auto tokens = scenarios::parse_quantity(o.tokens, scenarios::Dimension::count, &why);
  if (!tokens || *tokens <= 0)
    throw scenarios::ScenarioError(fmt::format("--tokens {}: expected a positive number such as 15e12 or 15T", o.tokens));
  req.tokens = *tokens;
  req.hardware = o.hardware;
  req.days = o.days;
  req.seq_len = o.seq_len;
  req.global_batch = o.global_batch;
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
  req.max_gpus = o.max_gpus;
  req.gpu_step = o.gpu_step;
  req.fixes = o.fixes;
  req.top = o.top;
  req.threads = o.threads;
  return req;
}

}  // namespace clustersim::tools
