#pragma once
// Steps a sweep has already simulated, for the configurations whose step is another's: ZeRO-2
// runs ZeRO-1's step under pipelining with overlapped gradient reduction (models::step_zero_stage),
// so of such a pair the first evaluated is simulated and the second takes its step. Shared by the
// sweep's worker threads: the second waits while the first is being simulated.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "models/step.hpp"
#include "scenarios/scenario.hpp"
#include "studies/sweep_space.hpp"

namespace clustersim::studies {

class StepMemo {
 public:
  /// The key `config` (loaded as `sc`) shares with the other configuration of its pair: its
  /// overrides with the ZeRO stage at the one its step runs; empty when it has no such pair (the
  /// space does not vary parallelism.zero_stage, or the step is its own).
  static std::string key(const SweepSpace& space, const Config& config, const scenarios::Scenario& sc);
  /// The pair's step when the other configuration has been simulated (waiting while it is: each
  /// key has one other configuration, so the step is taken); else nothing, and the caller, which
  /// now holds the key, simulates and calls put() or, if it cannot, release().
  std::optional<models::StepResult> take_or_hold(const std::string& key);
  void put(const std::string& key, const models::StepResult& step);
  void release(const std::string& key);
  /// Steps taken rather than simulated.
  std::uint64_t reused() const { return reused_; }

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  std::unordered_map<std::string, models::StepResult> steps_;
  std::set<std::string> held_;  ///< keys being simulated
  /// Keys in the order they were put: past kKeep the oldest step goes (a pair far apart in the
  /// space, or split over shards, is then simulated twice rather than held in memory).
  std::deque<std::string> order_;
  static constexpr std::size_t kKeep = 4096;
  std::atomic<std::uint64_t> reused_{0};
};

}  // namespace clustersim::studies
