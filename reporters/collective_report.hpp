#pragma once
// The table (nccl-tests' columns) and the JSON rows `clustersim collective` prints.
#include <string>

#include "studies/collective_study.hpp"

namespace clustersim::reporters {

std::string collective_text(const studies::CollectiveRequest& request, const studies::CollectiveResult& result);
std::string collective_json(const studies::CollectiveRequest& request, const studies::CollectiveResult& result);

}  // namespace clustersim::reporters
