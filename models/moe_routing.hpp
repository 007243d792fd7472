#pragma once
// Where a token's routed experts land: the expected number of EP ranks (or nodes) its top_k
// experts touch, which sets how many copies DeepEP / HybridEP send (one per rank within a node,
// one per node across nodes). Sources in moe_routing.cpp.
#include "models/model_spec.hpp"

namespace clustersim::models {

/// Expected distinct units a token's top_k experts fall on, the routed experts spread over
/// `units` in contiguous equal blocks (Megatron's expert placement over EP ranks; a node holds
/// consecutive ranks), routing balanced. Without group limit the top_k are drawn without
/// replacement from all experts; group-limited, `router_group_top_k` of the `router_groups`
/// contiguous groups are chosen and each gives top_k / router_group_top_k of them.
double expected_units_touched(const MoeSpec& moe, int units);

/// A token's spread over an EP group: the expected units touched out of `units`, nodes when the
/// group spans several, else its ranks (models::token_spread, moe_exchanges.hpp).
struct TokenSpread {
  double touched = 0;
  int units = 0;
  bool nodes = false;
};

}  // namespace clustersim::models
