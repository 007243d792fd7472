#pragma once
// Helpers shared by the route tests (route_shape_test, route_rotation_test).
#include <span>
#include <vector>

#include "topologies/topology.hpp"

namespace clustersim::testing {

/// Every route of a search from `src`, one vector of link ids per destination.
inline std::vector<std::vector<int>> routes(const topologies::Topology& t, int src, const std::vector<int>& dsts) {
  std::vector<std::vector<int>> out;
  t.routes_from(src, dsts, [&](std::size_t, std::span<const int> r) { out.emplace_back(r.begin(), r.end()); });
  return out;
}

}  // namespace clustersim::testing
