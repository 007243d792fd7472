#pragma once
// A whole-cluster network (every GPU in one DP group) and the nccl-tests bus bandwidth it gives,
// for tests that compare the network model with measured collectives.
#include "topologies/network.hpp"

namespace clustersim::testing {

inline topologies::Network whole_cluster(const topologies::TopologySpec& spec, int nodes,
                                         topologies::AlgorithmChoice a = topologies::AlgorithmChoice::automatic) {
  topologies::Layout l;
  l.sizes[topologies::index(topologies::GroupDim::dp)] = nodes * spec.gpus_per_node;
  return topologies::Network(spec, nodes, l, a);
}

/// nccl-tests busbw: bytes / time × the collective's bus factor.
inline double busbw(const topologies::Network& net, topologies::Collective c, double bytes) {
  const auto t = net.cost(c, topologies::GroupDim::dp, units::Bytes(bytes));
  return bytes / t.time.si() * topologies::bus_factor(c, net.layout().ranks());
}

}  // namespace clustersim::testing
