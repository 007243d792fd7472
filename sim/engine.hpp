#pragma once
// A minimal discrete-event engine: a priority queue of (time, insertion order) → callback.
// It knows nothing about GPUs, layers or networks; models schedule lambdas on it.
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "sim/units.hpp"

namespace clustersim::sim {

class Engine {
 public:
  using Callback = std::function<void()>;

  Time now() const { return now_; }
  /// Schedules `fn` at absolute time `at` (never in the past). Ties run in insertion order.
  void schedule_at(Time at, Callback fn);
  void schedule_after(Time delay, Callback fn) { schedule_at(now_ + delay, std::move(fn)); }
  /// Runs until no event is left.
  void run();
  std::uint64_t events_processed() const { return processed_; }

 private:
  struct Event {
    Time at;
    std::uint64_t seq;
    Callback fn;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.at != b.at ? a.at > b.at : a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> queue_;
  Time now_{};
  std::uint64_t next_seq_ = 0;
  std::uint64_t processed_ = 0;
};

}  // namespace clustersim::sim
