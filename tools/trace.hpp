#pragma once
// Chrome trace-event JSON (loads in Perfetto and chrome://tracing): one process per pipeline
// stage's representative rank, one thread per stream, one complete event per task; inside each
// compute task its kernels as nested slices, and the stage's memory as a counter track.
#include <string>
#include <vector>

#include "models/step.hpp"
#include "scenarios/simulate.hpp"

namespace clustersim::tools {

/// `report` is the same scenario's simulation: its kernel costs name the slices inside each
/// compute task, its per-stage memory estimate gives the memory counter.
std::string chrome_trace(const std::vector<models::TimelineEntry>& timeline, const scenarios::Report& report);

}  // namespace clustersim::tools
