#pragma once
// Why a plan does not fit in memory, with the per-component numbers and what to try next: the
// reason a sweep, a plan search and `run` give for an out-of-memory configuration.
#include <optional>
#include <string>

#include "scenarios/simulate.hpp"

namespace clustersim::studies {

/// One line: "<source>: plan does not fit in memory: needs X GiB per GPU of Y GiB (...); try ...".
std::string memory_error(const scenarios::Report& r);
/// The same for a scenario and its memory estimate (no report).
std::string memory_error(const scenarios::Scenario& sc, const models::MemoryEstimate& m);

/// The memory pre-screen of sweeps and plan searches: models::estimate_memory of the loaded
/// scenario (cheap), and when it does not fit, memory_error's reason; none when it fits.
std::optional<std::string> memory_prescreen(const scenarios::Scenario& sc);

}  // namespace clustersim::studies
