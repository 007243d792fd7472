#include "sim/engine.hpp"

#include <cassert>

namespace clustersim::sim {

void Engine::schedule_at(Time at, Callback fn) {
  assert(at >= now_ && "events cannot be scheduled in the past");
  queue_.push(Event{at < now_ ? now_ : at, next_seq_++, std::move(fn)});
}

void Engine::run() {
  while (!queue_.empty()) {
    // The callback may schedule more events, so move it out before popping.
    Event ev = std::move(const_cast<Event&>(queue_.top()));
    queue_.pop();
    now_ = ev.at;
    ++processed_;
    ev.fn();
  }
}

}  // namespace clustersim::sim
