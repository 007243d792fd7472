#pragma once
// Why a plan does not fit in memory, with the per-component numbers and what to try next: the
// reason a sweep, a plan search and `run` give for an out-of-memory configuration.
#include <string>

#include "scenarios/simulate.hpp"

namespace clustersim::studies {

/// One line: "<source>: plan does not fit in memory: needs X GiB per GPU of Y GiB (...); try ...".
std::string memory_error(const scenarios::Report& r);

}  // namespace clustersim::studies
