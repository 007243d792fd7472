#include "studies/bound_share.hpp"

namespace clustersim::studies {

std::string BoundShare::key(const Config& config) { return zero_twin_key(config, {"1", "2", "3"}, "1-3"); }

std::optional<SharedBound> BoundShare::find(const std::string& key) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto at = bounds_.find(key);
  if (at == bounds_.end()) return std::nullopt;
  return at->second;
}

void BoundShare::put(const std::string& key, SharedBound bound) {
  const std::lock_guard<std::mutex> lock(mutex_);
  bounds_.emplace(key, bound);
}

void BoundShare::clear() {
  const std::lock_guard<std::mutex> lock(mutex_);
  bounds_.clear();
}

}  // namespace clustersim::studies
