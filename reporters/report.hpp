#pragma once
// Reporters: Report → terminal text or JSON (SI units, unit in the key name).
#include <string>
#include <utility>
#include <vector>

#include "scenarios/simulate.hpp"
#include "studies/json_value.hpp"

namespace clustersim::reporters {

std::string format_text(const scenarios::Report& r);
/// `extra` members (key, JSON value) are appended to the object, e.g. "explain".
std::string format_json(const scenarios::Report& r,
                        const std::vector<std::pair<std::string, studies::Json>>& extra = {});

}  // namespace clustersim::reporters
