#pragma once
// Chrome trace-event JSON (loads in Perfetto and chrome://tracing): one process per pipeline
// stage's representative rank, one thread per stream, one complete event per task (a transfer
// named by its group and collective: tp.all_gather, cp.send, ep.all_to_all, ...); inside each
// compute task its kernels as nested slices, and the stage's memory as a counter track.
#include <cstddef>
#include <ostream>
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

struct TraceOptions {
  /// Every task and kernel of micro-batches 0 to N-1 (-1: all); the later ones folded, each
  /// stream's back-to-back tasks of one micro-batch and kind as one slice, as otherData says
  /// (`run --trace-micro-batches N`).
  int micro_batches = -1;
};

/// The trace written event by event to `out` (a 70B step at batch 8,192 is over 500 MB; it is
/// never held as one string).
void write_chrome_trace(std::ostream& out, const std::vector<models::TimelineEntry>& timeline, const scenarios::Report& report,
                        const TraceOptions& options = {});
/// The same trace as one string (tests, small steps).
std::string chrome_trace(const std::vector<models::TimelineEntry>& timeline, const scenarios::Report& report,
                         const TraceOptions& options = {});

/// What write_chrome_trace would write, estimated before writing it: events and bytes.
struct TraceSize {
  std::size_t events = 0;
  double bytes = 0;
};
TraceSize trace_size(const std::vector<models::TimelineEntry>& timeline, const scenarios::Report& report,
                     const TraceOptions& options = {});

}  // namespace clustersim::reporters
