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

/// Each of `c`'s equivalent plans (PlanCandidate::equivalents) as the settings where it differs
/// from `c`, "key=value" joined by spaces, e.g. "parallelism.zero_stage=2".
std::vector<std::string> equivalent_settings(const std::vector<std::string>& header, const studies::PlanCandidate& c);

std::string plan_json(const studies::PlanRequest& request, const studies::PlanResult& result);

}  // namespace clustersim::reporters
