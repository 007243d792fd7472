#include "studies/bound_share.hpp"

namespace clustersim::studies {

std::string BoundShare::key(const Config& config) {
  const std::string zero = "parallelism.zero_stage=";
  std::string k;
  bool sharded = false;
  for (const std::string& a : config.overrides.assignments()) {
    if (a.rfind(zero, 0) == 0) {
      const std::string stage = a.substr(zero.size());
      if (stage != "1" && stage != "2" && stage != "3") return "";
      sharded = true;
      k += zero + "1-3";
    } else {
      k += a;
    }
    k += '\x1f';
  }
  return sharded ? k : "";
}

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
