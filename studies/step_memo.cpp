#include "studies/step_memo.hpp"

#include <algorithm>

namespace clustersim::studies {

std::string StepMemo::key(const SweepSpace& space, const Config& config, const scenarios::Scenario& sc) {
  const auto& columns = space.columns();
  const auto at = std::find(columns.begin(), columns.end(), "parallelism.zero_stage");
  if (at == columns.end()) return "";
  const auto column = static_cast<std::size_t>(at - columns.begin());
  const std::string& zero = config.values[column];
  const int stage = sc.parallel.zero_stage;
  if ((zero != "1" && zero != "2") || zero != std::to_string(stage) ||
      models::step_zero_stage(sc.training, sc.parallel) != 1)
    return "";
  std::string k;
  for (std::size_t i = 0; i < config.values.size(); ++i) {
    k += i == column ? std::string("1") : config.values[i];
    k += '\x1f';
  }
  return k;
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
    steps_.emplace(key, step);
    held_.erase(key);
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
