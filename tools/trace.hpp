#pragma once
// Chrome trace-event JSON (loads in Perfetto and chrome://tracing): one process per pipeline
// stage's representative rank, one thread per stream, one complete event per task.
#include <string>
#include <vector>

#include "models/step.hpp"

namespace clustersim::tools {

std::string chrome_trace(const std::vector<models::TimelineEntry>& timeline, const std::string& title);

}  // namespace clustersim::tools
