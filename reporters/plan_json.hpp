#pragma once
// The JSON object `clustersim plan --json` prints (also returned by the Python module's plan()).
#include <string>

#include "studies/plan_search.hpp"

namespace clustersim::reporters {

std::string plan_json(const studies::PlanRequest& request, const studies::PlanResult& result);

}  // namespace clustersim::reporters
