#pragma once
// Topology descriptions (topologies/presets/*.yaml, embedded in the binary) → TopologySpec.
#include <string>
#include <vector>

#include "topologies/topology_spec.hpp"

namespace clustersim::scenarios {

class YamlReader;

/// Reads one topology description; errors name the file, key path and what is allowed.
topologies::TopologySpec read_topology(const YamlReader& r, const std::string& name);
/// Applies a scenario's `network.node` / `network.fabric` keys (rates, efficiencies, NIC count,
/// leaf size, oversubscription, rails) on top of the topology it names: a what-if on one link
/// without writing a topology file. The node kind and GPU count are not overridable.
void override_topology(const YamlReader& net, topologies::TopologySpec* t);
/// Parses a topology description from YAML text (`source` names it in errors).
topologies::TopologySpec parse_topology(const std::string& yaml, const std::string& source);
/// A shipped topology by name; throws ScenarioError listing the available ones.
topologies::TopologySpec topology_preset(const std::string& name);
std::vector<std::string> topology_names();
/// Whether `t` can run with k GPUs per node (cluster.gpus_per_node): a smaller board of the same
/// machine divides its node, joined boards are a multiple of it, and a rack-scale NVLink domain
/// may be part-used in whole 4-GPU compute trays.
bool reshapes_to(const topologies::TopologySpec& t, int k);
/// GPUs per compute tray of a rack-scale NVLink domain (hardware.md §2: GB200/GB300 NVL72).
inline constexpr int kGpusPerTray = 4;
/// GPUs of one rack a job of `gpus` GPUs gets on a rack-scale NVLink domain, as NVIDIA's
/// launchers allocate it: SLURM `--segment` of all the trays when they fit one rack, else the
/// largest divisor of the tray count that fits (Megatron-Bridge scripts/performance/utils/
/// executors.py at v0.4.0-v0.6.0: 256 GPUs → 16 trays of each of 4 racks, 64 GPUs per NVLink
/// domain), so every segment — and the stage's EP groups inside it — stays in one rack. Other
/// node kinds, or a job not in whole trays: the node size.
int nvl_segment_gpus(const topologies::TopologySpec& t, int gpus);
/// The unit a cluster of topology `t` is allocated in: a 4-GPU compute tray on a rack-scale
/// NVLink domain (a job's racks then take its nvl_segment_gpus), else a node.
int allocation_gpus(const topologies::TopologySpec& t);
/// `t` with k GPUs per node, keeping its NICs per GPU (at least one NIC per node).
topologies::TopologySpec reshaped(topologies::TopologySpec t, int k);

}  // namespace clustersim::scenarios
