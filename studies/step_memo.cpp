#include "studies/step_memo.hpp"

#include <algorithm>

namespace clustersim::studies {

std::string StepMemo::key(const SweepSpace& space, const Config& config, const scenarios::Scenario& sc) {
  const auto& columns = space.columns();
  if (std::find(columns.begin(), columns.end(), "parallelism.zero_stage") == columns.end()) return "";
  const int stage = sc.parallel.zero_stage;
  if ((stage != 1 && stage != 2) || models::step_zero_stage(sc.training, sc.parallel) != 1) return "";
  // Every override the configuration applies, its ZeRO stage read as 1: a pair differs only there.
  return zero_twin_key(config, {"1", "2"}, "1");
}

std::optional<models::StepResult> StepMemo::take_or_hold(const std::string& key) {
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return held_.count(key) == 0; });
  const auto at = steps_.find(key);
  if (at == steps_.end()) {
    held_.insert(key);
    return std::nullopt;
  }
  std::optional<models::StepResult> step(std::move(at->second));
  steps_.erase(at);
  ++reused_;
  return step;
}

void StepMemo::put(const std::string& key, const models::StepResult& step) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (steps_.emplace(key, step).second) order_.push_back(key);
    held_.erase(key);
    while (order_.size() > kKeep) {
      steps_.erase(order_.front());  // gone already when its pair took it
      order_.pop_front();
    }
  }
  done_.notify_all();
}

void StepMemo::release(const std::string& key) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    held_.erase(key);
  }
  done_.notify_all();
}

}  // namespace clustersim::studies
