#pragma once
// Chrome trace-event JSON (loads in Perfetto and chrome://tracing): one process per pipeline
// stage's representative rank, one thread per stream, one complete event per task (a transfer
// named by its group and collective: tp.all_gather, cp.send, ep.all_to_all, ...); inside each
// compute task its kernels as nested slices, and the stage's memory as a counter track.
#include <string>
#include <vector>

#include "models/step.hpp"
#include "scenarios/simulate.hpp"

namespace clustersim::reporters {

/// `report` is the same scenario's simulation: its kernel costs name the slices inside each
/// compute task, its per-stage memory estimate gives the memory counter.
/// A task's name without its place: "tp.reduce_scatter", "pp.send", … for a transfer, the task kind
/// ("forward", "optimizer", …) otherwise.
std::string collective_name(const models::TimelineEntry& e);

std::string chrome_trace(const std::vector<models::TimelineEntry>& timeline, const scenarios::Report& report);

}  // namespace clustersim::reporters
