#pragma once
// A cluster's network as users describe it (topologies/*.yaml): the scale-up domain of a node
// (NVSwitch, a rack-scale NVLink domain, or PCIe switches only) and the scale-out fabric (a
// leaf/spine fat tree). Plain aggregate filled by scenarios/topology_load.cpp; topology.cpp
// expands it into a graph. Bandwidths are per direction, in bytes/s.
#include <string>

#include "hardware/gpu_spec.hpp"

namespace clustersim::topologies {

enum class NodeKind { nvswitch, nvl_domain, pcie };
inline const char* name(NodeKind k) {
  return k == NodeKind::nvswitch ? "nvswitch" : k == NodeKind::nvl_domain ? "nvl_domain" : "pcie";
}

/// Every field except name and description shapes routing or bandwidth, so every one of them
/// must also be part of plan_key() in collective.cpp (the process-wide plan cache).
struct TopologySpec {
  std::string name = "derived";
  std::string description;
  // Scale-up domain ("node": one box, or one NVL72 rack).
  NodeKind node_kind = NodeKind::nvswitch;
  int gpus_per_node = 8;
  double nvlink_bps = 0;            ///< per GPU, per direction (nvswitch / nvl_domain)
  double nvlink_efficiency = 0.8;   ///< NCCL ring busbw / nvlink_bps
  double nvls_efficiency = 0;       ///< NVLink SHARP all-reduce algbw / nvlink_bps (0: no NVLS)
  double pcie_bps = 31.5e9;         ///< per x16 link, per direction
  double pcie_efficiency = 0.8;
  int gpus_per_pcie_switch = 2;     ///< GPUs (and NICs) sharing one PCIe switch uplink (pcie kind)
  // Scale-out.
  int nics_per_node = 8;
  double nic_bps = 0;               ///< per NIC, per direction
  double nic_efficiency = 0.95;     ///< NCCL busbw per NIC / line rate
  int nodes_per_leaf = 32;          ///< nodes under one leaf (per rail when rail-optimized)
  double oversubscription = 1.0;    ///< leaf downlink : uplink bandwidth
  bool rail_optimized = true;       ///< NIC i of every node goes to the rail-i leaf
};

/// The topology implied by a hardware profile's node section: NVSwitch (or PCIe) nodes on a
/// non-blocking rail-optimized fat tree. Keeps scenarios without a `network:` section working.
TopologySpec topology_from_node(const hardware::NodeSpec& node);

}  // namespace clustersim::topologies
