#pragma once
// A minimal discrete-event engine: a priority queue of (time, insertion order) → handler.
// It knows nothing about GPUs, layers or networks; models schedule work on it.
//
// An event is plain data (a handler function, a context pointer and a 64-bit argument) that
// the heap moves with a memcpy. Arbitrary callables are accepted too; they wait aside.
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/units.hpp"

namespace clustersim::sim {

class Engine {
 public:
  using Handler = void (*)(void* context, std::uint64_t argument);
  using Callback = std::function<void()>;

  Time now() const { return now_; }
  /// Schedules handler(context, argument) at absolute time `at` (never in the past). Ties run
  /// in insertion order.
  void schedule_at(Time at, Handler handler, void* context, std::uint64_t argument);
  /// Schedules any callable (the callable is stored aside until it runs).
  void schedule_at(Time at, Callback fn);
  void schedule_after(Time delay, Callback fn) { schedule_at(now_ + delay, std::move(fn)); }
  /// Runs until no event is left.
  void run();
  std::uint64_t events_processed() const { return processed_; }
  /// Back to time zero with no event pending, keeping the queue's storage (an engine reused
  /// for the next simulation on a thread allocates nothing).
  void reset();

 private:
  struct Event {
    Time at;
    std::uint64_t seq;
    Handler handler;
    void* context;
    std::uint64_t argument;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.at != b.at ? a.at > b.at : a.seq > b.seq;
    }
  };
  static void call_stored(void* engine, std::uint64_t slot);

  std::vector<Event> queue_;  // a binary heap under Later (std::push_heap / std::pop_heap)
  std::vector<Callback> stored_;  // callables of pending schedule_at(Time, Callback) events
  std::vector<std::uint64_t> free_slots_;
  Time now_{};
  std::uint64_t next_seq_ = 0;
  std::uint64_t processed_ = 0;
};

}  // namespace clustersim::sim
