#include "sim/engine.hpp"

#include <algorithm>
#include <cassert>

namespace clustersim::sim {

void Engine::schedule_at(Time at, Handler handler, void* context, std::uint64_t argument) {
  assert(at >= now_ && "events cannot be scheduled in the past");
  queue_.push_back(Event{at < now_ ? now_ : at, next_seq_++, handler, context, argument});
  std::push_heap(queue_.begin(), queue_.end(), Later{});
}

void Engine::schedule_at(Time at, Callback fn) {
  std::uint64_t slot = stored_.size();
  if (free_slots_.empty()) {
    stored_.push_back(std::move(fn));
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    stored_[slot] = std::move(fn);
  }
  schedule_at(at, &Engine::call_stored, this, slot);
}

void Engine::call_stored(void* engine, std::uint64_t slot) {
  auto* self = static_cast<Engine*>(engine);
  Callback fn = std::move(self->stored_[slot]);
  self->stored_[slot] = nullptr;
  self->free_slots_.push_back(slot);
  fn();
}

void Engine::reset() {
  queue_.clear();
  stored_.clear();
  free_slots_.clear();
  now_ = Time{};
  next_seq_ = 0;
  processed_ = 0;
}

void Engine::run() {
  while (!queue_.empty()) {
    std::pop_heap(queue_.begin(), queue_.end(), Later{});
    const Event ev = queue_.back();
    queue_.pop_back();
    now_ = ev.at;
    ++processed_;
    ev.handler(ev.context, ev.argument);
  }
}

}  // namespace clustersim::sim
