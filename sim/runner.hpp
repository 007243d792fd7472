#pragma once
// Executes a TaskGraph on an Engine as a fluid model: each running task progresses at a rate
// in (0, 1]; rates are recomputed whenever a task starts or ends. Sharing rule: priority
// classes are served highest first; within a class, rates are max-min fair (progressive
// filling, as in SimGrid's LMM solver) subject to Σ demand·rate ≤ 1 on every resource.
// Predicted finish events carry a generation number and go stale when rates change
// (STYLE.md D.4: no cancellation in the engine).
#include <vector>

#include "sim/engine.hpp"
#include "sim/task_graph.hpp"

namespace clustersim::sim {

struct TaskTiming {
  Time start{};
  Time end{};
};

struct RunResult {
  std::vector<TaskTiming> timing;  ///< indexed by TaskId
  Time makespan{};
  std::uint64_t events = 0;
};

/// Runs every task of `graph` once; throws std::logic_error if a dependency cycle leaves
/// tasks that can never start.
RunResult run_task_graph(const TaskGraph& graph);

}  // namespace clustersim::sim
