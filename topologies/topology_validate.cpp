#include <stdexcept>
#include <string>

#include "topologies/topology.hpp"

namespace clustersim::topologies {

namespace {

void check_spec(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

}  // namespace

void Topology::validate(const TopologySpec& s, int nodes) {
  check_spec(nodes >= 1, "the cluster needs at least one node");
  check_spec(s.gpus_per_node >= 1, "gpus_per_node must be at least 1");
  if (has_gpu_fabric(s.node_kind))
    check_spec(s.nvlink_bandwidth.si() > 0, "an NVLink node needs nvlink_bandwidth above zero");
  check_spec(s.nvls_efficiency == 0 || has_nvswitch(s.node_kind), "nvls_efficiency needs an NVSwitch node");
  check_spec(s.pcie_bandwidth.si() > 0, "pcie_bandwidth must be above zero");
  for (double e : {s.nvlink_efficiency, s.pcie_efficiency, s.nic_efficiency})
    check_spec(e > 0 && e <= 1.5, "efficiencies must be in (0, 1.5]");
  check_spec(s.nvls_efficiency >= 0 && s.nvls_efficiency <= 1.5, "nvls_efficiency must be in [0, 1.5]");
  check_spec(s.gpus_per_pcie_switch >= 1, "gpus_per_pcie_switch must be at least 1");
  check_spec(s.nics_per_node >= 1, "nics_per_node must be at least 1");
  check_spec(s.nics_per_node <= s.gpus_per_node, "nics_per_node cannot exceed gpus_per_node (one NIC per GPU at most)");
  check_spec(s.nic_bandwidth.si() > 0, "nic_bandwidth must be above zero");
  check_spec(s.nodes_per_leaf >= 1, "nodes_per_leaf must be at least 1");
  check_spec(s.oversubscription >= 1.0, "oversubscription must be at least 1 (downlink : uplink)");
}

}  // namespace clustersim::topologies
