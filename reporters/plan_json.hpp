#pragma once
// The JSON object `clustersim plan --json` prints (also returned by the Python module's plan()).
#include <string>
#include <vector>

#include "studies/plan_search.hpp"

namespace clustersim::reporters {

/// The columns of a plan in the plan tables and the JSON, besides its figures (with the global
/// batch when it is searched, and parallelism.ep / parallelism.etp after dp when `header`, the
/// result's columns, has them: an MoE model's plans).
std::vector<std::string> plan_columns(bool batch_searched, const std::vector<std::string>& header);

std::string plan_json(const studies::PlanRequest& request, const studies::PlanResult& result);

}  // namespace clustersim::reporters
