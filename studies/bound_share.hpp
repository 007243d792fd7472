#pragma once
// Step bounds the plan search has already computed, for plans whose bound is another's: a plan
// at ZeRO stage 1, 2 or 3 has the bound of its twin at another of those stages (the models read
// the stage only as "at least 1" in what the bound holds: the optimizer's and the gradient
// norm's shard; the DP traffic that tells the stages apart is not in the bound). Shared by the
// screen's worker threads; a twin not found yet is bounded again, to the same value.
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "studies/sweep_space.hpp"

namespace clustersim::studies {

struct SharedBound {
  double bound_s = 0;
  bool network_bound = false;  ///< the bound is the pass bound (plan_step_screen_bound_s)
};

class BoundShare {
 public:
  /// The key `config` shares with its twins: its overrides with a ZeRO stage of 1-3 read as one;
  /// empty when it sets no such stage.
  static std::string key(const Config& config);
  std::optional<SharedBound> find(const std::string& key) const;
  void put(const std::string& key, SharedBound bound);
  void clear();

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, SharedBound> bounds_;
};

}  // namespace clustersim::studies
