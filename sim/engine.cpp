#include "sim/engine.hpp"

#include <cassert>

namespace clustersim::sim {

void Engine::schedule_at(Time at, Handler handler, void* context, std::uint64_t argument) {
  assert(at >= now_ && "events cannot be scheduled in the past");
  queue_.push(Event{at < now_ ? now_ : at, next_seq_++, handler, context, argument});
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

void Engine::run() {
  while (!queue_.empty()) {
    const Event ev = queue_.top();
    queue_.pop();
    now_ = ev.at;
    ++processed_;
    ev.handler(ev.context, ev.argument);
  }
}

}  // namespace clustersim::sim
