#pragma once
// A generic dependency graph of timed tasks on FIFO streams, sharing capacity-limited
// resources. Like CUDA: a stream runs its tasks in the order they were added; a task may also
// wait for tasks on other streams (like cudaStreamWaitEvent). Nothing here knows what a task
// computes; models attach their own meaning through `tag`.
#include <cstdint>
#include <span>
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

/// A task as a caller describes it (convenient for hand-built graphs and tests).
struct Task {
  std::int32_t stream = 0;
  Time work{};                       ///< duration when it runs alone at full rate
  std::vector<TaskId> deps;          ///< must finish before this task starts (any stream)
  std::vector<ResourceUse> uses;     ///< resources it occupies while running
  std::int32_t priority = 0;         ///< higher priority is served first on shared resources
  std::int32_t tag = 0;              ///< opaque to the engine: the model's task kind
};

/// A stored task: dependencies and resource uses live in two flat arrays of the graph (one
/// allocation per graph rather than two per task; a step has up to ~10^5 tasks). The spans
/// stay valid until the next add().
struct TaskView {
  std::int32_t stream;
  Time work;
  std::span<const TaskId> deps;
  std::span<const ResourceUse> uses;
  std::int32_t priority;
  std::int32_t tag;
};

class TaskGraph {
 public:
  TaskId add(std::int32_t stream, Time work, std::span<const TaskId> deps, std::span<const ResourceUse> uses,
             std::int32_t priority = 0, std::int32_t tag = 0) {
    if (stream >= num_streams_) num_streams_ = stream + 1;
    for (const auto& u : uses)
      if (u.resource >= num_resources_) num_resources_ = u.resource + 1;
    Stored t{stream, work, static_cast<std::uint32_t>(deps_.size()), static_cast<std::uint32_t>(deps.size()),
             static_cast<std::uint32_t>(uses_.size()), static_cast<std::uint32_t>(uses.size()), priority, tag};
    deps_.insert(deps_.end(), deps.begin(), deps.end());
    uses_.insert(uses_.end(), uses.begin(), uses.end());
    tasks_.push_back(t);
    return static_cast<TaskId>(tasks_.size() - 1);
  }
  TaskId add(const Task& t) { return add(t.stream, t.work, t.deps, t.uses, t.priority, t.tag); }
  TaskView operator[](TaskId id) const {
    const Stored& t = tasks_[static_cast<std::size_t>(id)];
    return {t.stream, t.work, {deps_.data() + t.deps_at, t.deps_n}, {uses_.data() + t.uses_at, t.uses_n}, t.priority,
            t.tag};
  }
  std::int32_t num_streams() const { return num_streams_; }
  std::int32_t num_resources() const { return num_resources_; }
  std::size_t size() const { return tasks_.size(); }
  void reserve(std::size_t n) { tasks_.reserve(n); }
  /// No task left; the storage is kept for the next graph built in it.
  void clear() {
    tasks_.clear(), deps_.clear(), uses_.clear();
    num_streams_ = 0, num_resources_ = 0;
  }

 private:
  struct Stored {
    std::int32_t stream;
    Time work;
    std::uint32_t deps_at, deps_n, uses_at, uses_n;
    std::int32_t priority, tag;
  };
  std::vector<Stored> tasks_;
  std::vector<TaskId> deps_;
  std::vector<ResourceUse> uses_;
  std::int32_t num_streams_ = 0;
  std::int32_t num_resources_ = 0;
};

}  // namespace clustersim::sim
