#pragma once
// A cluster's network as users describe it (topologies/presets/*.yaml): the scale-up domain of
// a node (NVSwitch, a rack-scale NVLink domain, a point-to-point full mesh such as AMD xGMI, or
// PCIe switches only) and the scale-out fabric (a leaf/spine fat tree). Plain aggregate filled
// by scenarios/topology_load.cpp; topology.cpp expands it into a graph. This is the only place
// network data lives: hardware profiles name a default topology, nothing more. Bandwidths are
// per direction, as units::BytesPerSecond.
#include <array>
#include <string>

#include "units/units.hpp"

namespace clustersim::topologies {

/// nvswitch, nvl_domain: every GPU has one link into a non-blocking switch (any pair at the full
/// per-GPU rate). full_mesh: a direct link between every pair of GPUs, nvlink_bandwidth/(gpus−1) each
/// (AMD MI300X xGMI: 7 × 64 GB/s, hardware.md §2.1), so one pair gets only its own link.
/// pcie: no GPU-to-GPU fabric; traffic crosses PCIe switches.
enum class NodeKind { nvswitch, nvl_domain, pcie, full_mesh };
inline constexpr std::array<const char*, 4> kNodeKindNames = {"nvswitch", "nvl_domain", "pcie", "full_mesh"};
inline const char* name(NodeKind k) { return kNodeKindNames[static_cast<std::size_t>(k)]; }
/// Whether the node has a GPU-to-GPU fabric (NVLink / xGMI) rather than PCIe only.
inline bool has_gpu_fabric(NodeKind k) { return k != NodeKind::pcie; }
/// Whether the node has a switch that can reduce in the network (NVLink SHARP).
inline bool has_nvswitch(NodeKind k) { return k == NodeKind::nvswitch || k == NodeKind::nvl_domain; }

/// Every field except name and description shapes routing or bandwidth; the plan cache
/// (collective.cpp) keys on the whole spec through operator==, so a new field joins the key.
struct TopologySpec {
  std::string name;
  std::string description;
  // Scale-up domain ("node": one box, or one NVL72 rack).
  NodeKind node_kind = NodeKind::nvswitch;
  int gpus_per_node = 8;
  units::BytesPerSecond nvlink_bandwidth;  ///< per GPU, per direction, all its links (nvswitch / nvl_domain / full_mesh)
  double nvlink_efficiency = 0.8;   ///< NCCL ring busbw / nvlink_bandwidth
  double nvls_efficiency = 0;       ///< NVLink SHARP all-reduce algbw / nvlink_bandwidth (0: no NVLS)
  units::BytesPerSecond pcie_bandwidth{31.5e9};  ///< per x16 link, per direction
  double pcie_efficiency = 0.8;
  int gpus_per_pcie_switch = 2;     ///< GPUs (and NICs) sharing one PCIe switch uplink (pcie kind)
  /// A GPU's link to host memory, per direction (copy engines at pcie_efficiency); 0: its PCIe
  /// x16 link (x86 hosts). Grace hosts: its share of NVLink-C2C.
  units::BytesPerSecond host_link_bandwidth{0};
  // Scale-out.
  int nics_per_node = 8;
  units::BytesPerSecond nic_bandwidth;  ///< per NIC, per direction
  double nic_efficiency = 0.95;     ///< NCCL busbw per NIC / line rate
  int nodes_per_leaf = 32;          ///< nodes under one leaf (per rail when rail-optimized)
  double oversubscription = 1.0;    ///< leaf downlink : uplink bandwidth
  bool rail_optimized = true;       ///< NIC i of every node goes to the rail-i leaf

  bool operator==(const TopologySpec&) const = default;
};

}  // namespace clustersim::topologies
