#pragma once
// Reporters: Report → terminal text or JSON (SI units, unit in the key name).
#include <string>

#include "scenarios/simulate.hpp"

namespace clustersim::tools {

std::string format_text(const scenarios::Report& r);
std::string format_json(const scenarios::Report& r);
/// One line for stderr when the plan does not fit in memory, with the numbers.
std::string memory_error(const scenarios::Report& r);

}  // namespace clustersim::tools
