#pragma once
// A generic dependency graph of timed tasks on FIFO streams, sharing capacity-limited
// resources. Like CUDA: a stream runs its tasks in the order they were added; a task may also
// wait for tasks on other streams (like cudaStreamWaitEvent). Nothing here knows what a task
// computes; models attach their own meaning through `tag`.
#include <cstdint>
#include <vector>

#include "sim/units.hpp"

namespace clustersim::sim {

using TaskId = std::int32_t;

/// A task consumes `demand` (a fraction, 0..1] of a resource's capacity while it runs at full
/// rate. When the demands of concurrent tasks exceed 1, the resource is shared and the tasks
/// slow down (see runner.hpp for the sharing rule).
struct ResourceUse {
  std::int32_t resource = 0;
  double demand = 1.0;
};

struct Task {
  std::int32_t stream = 0;
  Time work{};                       ///< duration when it runs alone at full rate
  std::vector<TaskId> deps;          ///< must finish before this task starts (any stream)
  std::vector<ResourceUse> uses;     ///< resources it occupies while running
  std::int32_t priority = 0;         ///< higher priority is served first on shared resources
  std::int32_t tag = 0;              ///< opaque to the engine: the model's task kind
};

class TaskGraph {
 public:
  TaskId add(Task t) {
    if (t.stream >= num_streams_) num_streams_ = t.stream + 1;
    for (const auto& u : t.uses)
      if (u.resource >= num_resources_) num_resources_ = u.resource + 1;
    tasks_.push_back(std::move(t));
    return static_cast<TaskId>(tasks_.size() - 1);
  }
  const std::vector<Task>& tasks() const { return tasks_; }
  const Task& operator[](TaskId id) const { return tasks_[static_cast<std::size_t>(id)]; }
  std::int32_t num_streams() const { return num_streams_; }
  std::int32_t num_resources() const { return num_resources_; }
  std::size_t size() const { return tasks_.size(); }
  void reserve(std::size_t n) { tasks_.reserve(n); }

 private:
  std::vector<Task> tasks_;
  std::int32_t num_streams_ = 0;
  std::int32_t num_resources_ = 0;
};

}  // namespace clustersim::sim
