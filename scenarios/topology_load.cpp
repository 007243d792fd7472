#include "scenarios/topology_load.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/presets.hpp"
#include "scenarios/yaml_reader.hpp"
#include "topologies/topology.hpp"

namespace clustersim::scenarios {


namespace {
constexpr double kMaxBw = 1e14;
}

topologies::TopologySpec read_topology(const YamlReader& r, const std::string& name) {
  r.allow_only({"name", "description", "node", "fabric"});
  topologies::TopologySpec t;
  t.name = r.text("name", name);
  t.description = r.text("description", t.name);
  if (!r.has("node")) r.fail("node", "is required (the scale-up domain: kind, gpus, bandwidths, NICs)");
  const YamlReader n = r.child("node");
  n.allow_only({"kind", "gpus", "nvlink_bandwidth", "nvlink_efficiency", "nvls_efficiency", "pcie_bandwidth",
                "pcie_efficiency", "host_link_bandwidth", "gpus_per_pcie_switch", "nics_per_node", "nic_bandwidth",
                "nic_efficiency"});
  const std::vector<std::string> kinds(topologies::kNodeKindNames.begin(), topologies::kNodeKindNames.end());
  if (!n.has("kind")) n.fail("kind", "is required; allowed: " + join(kinds));
  t.node_kind = static_cast<topologies::NodeKind>(n.choice("kind", kinds, 0));
  if (!n.has("gpus")) n.fail("gpus", "is required (GPUs in one node or NVLink domain)");
  t.gpus_per_node = n.integer("gpus", 8, 1, 1024);
  if (t.node_kind != topologies::NodeKind::pcie) {
    if (!n.has("nvlink_bandwidth")) n.fail("nvlink_bandwidth", "is required for an NVLink node (per GPU, per direction)");
    t.nvlink_bandwidth = units::BytesPerSecond(n.quantity("nvlink_bandwidth", Dimension::bandwidth, 0, 1e6, kMaxBw));
  } else if (n.has("nvlink_bandwidth")) {
    n.fail("nvlink_bandwidth", "a pcie node has no NVLink; use kind: nvswitch");
  }
  t.nvlink_efficiency = n.number("nvlink_efficiency", 0.8, 0.01, 1.5);
  t.nvls_efficiency = n.number("nvls_efficiency", 0.0, 0.0, 1.5);
  if (t.nvls_efficiency > 0 && !topologies::has_nvswitch(t.node_kind))
    n.fail("nvls_efficiency", fmt::format("NVLink SHARP needs an NVSwitch node; a {} node has none", topologies::name(t.node_kind)));
  if (!n.has("pcie_bandwidth")) n.fail("pcie_bandwidth", "is required (x16 per direction)");
  t.pcie_bandwidth = units::BytesPerSecond(n.quantity("pcie_bandwidth", Dimension::bandwidth, 0, 1e6, kMaxBw));
  t.pcie_efficiency = n.number("pcie_efficiency", 0.8, 0.01, 1.0);
  if (n.has("host_link_bandwidth"))
    t.host_link_bandwidth =
        units::BytesPerSecond(n.quantity("host_link_bandwidth", Dimension::bandwidth, 0, 1e6, kMaxBw));
  t.gpus_per_pcie_switch = n.integer("gpus_per_pcie_switch", 2, 1, t.gpus_per_node);
  t.nics_per_node = n.integer("nics_per_node", t.gpus_per_node, 1, t.gpus_per_node);
  if (!n.has("nic_bandwidth")) n.fail("nic_bandwidth", "is required (per NIC, per direction, e.g. 400Gb/s)");
  t.nic_bandwidth = units::BytesPerSecond(n.quantity("nic_bandwidth", Dimension::bandwidth, 0, 1e6, kMaxBw));
  t.nic_efficiency = n.number("nic_efficiency", 0.95, 0.01, 1.0);
  const YamlReader f = r.child("fabric");
  f.allow_only({"kind", "nodes_per_leaf", "oversubscription", "rail_optimized"});
  f.choice("kind", {"fat_tree"}, 0);
  t.nodes_per_leaf = f.integer("nodes_per_leaf", 32, 1, 100000);
  t.oversubscription = f.number("oversubscription", 1.0, 1.0, 1000.0);
  t.rail_optimized = f.boolean("rail_optimized", true);
  try {
    topologies::Topology::validate(t, 2);  // what the graph generators require
  } catch (const std::invalid_argument& e) {
    r.fail("node", e.what());
  }
  return t;
}

void override_topology(const YamlReader& net, topologies::TopologySpec* t) {
  if (!net.has("node") && !net.has("fabric")) return;
  const YamlReader n = net.child("node");
  n.allow_only({"nvlink_bandwidth", "nvlink_efficiency", "nvls_efficiency", "pcie_bandwidth", "pcie_efficiency",
                "host_link_bandwidth", "gpus_per_pcie_switch", "nics_per_node", "nic_bandwidth", "nic_efficiency"});
  if (n.has("nvlink_bandwidth") && !topologies::has_gpu_fabric(t->node_kind))
    n.fail("nvlink_bandwidth", fmt::format("topology '{}' has no NVLink (a pcie node); name another topology", t->name));
  t->nvlink_bandwidth = units::BytesPerSecond(n.quantity("nvlink_bandwidth", Dimension::bandwidth, t->nvlink_bandwidth.si(), 1e6, kMaxBw));
  t->nvlink_efficiency = n.number("nvlink_efficiency", t->nvlink_efficiency, 0.01, 1.5);
  t->nvls_efficiency = n.number("nvls_efficiency", t->nvls_efficiency, 0.0, 1.5);
  if (t->nvls_efficiency > 0 && !topologies::has_nvswitch(t->node_kind))
    n.fail("nvls_efficiency", fmt::format("NVLink SHARP needs an NVSwitch node; a {} node has none", topologies::name(t->node_kind)));
  t->pcie_bandwidth = units::BytesPerSecond(n.quantity("pcie_bandwidth", Dimension::bandwidth, t->pcie_bandwidth.si(), 1e6, kMaxBw));
  t->pcie_efficiency = n.number("pcie_efficiency", t->pcie_efficiency, 0.01, 1.0);
  t->host_link_bandwidth = units::BytesPerSecond(
      n.quantity("host_link_bandwidth", Dimension::bandwidth, t->host_link_bandwidth.si(), 0, kMaxBw));
  t->gpus_per_pcie_switch = n.integer("gpus_per_pcie_switch", t->gpus_per_pcie_switch, 1, t->gpus_per_node);
  t->nics_per_node = n.integer("nics_per_node", t->nics_per_node, 1, t->gpus_per_node);
  t->nic_bandwidth = units::BytesPerSecond(n.quantity("nic_bandwidth", Dimension::bandwidth, t->nic_bandwidth.si(), 1e6, kMaxBw));
  t->nic_efficiency = n.number("nic_efficiency", t->nic_efficiency, 0.01, 1.0);
  const YamlReader f = net.child("fabric");
  f.allow_only({"nodes_per_leaf", "oversubscription", "rail_optimized"});
  t->nodes_per_leaf = f.integer("nodes_per_leaf", t->nodes_per_leaf, 1, 100000);
  t->oversubscription = f.number("oversubscription", t->oversubscription, 1.0, 1000.0);
  t->rail_optimized = f.boolean("rail_optimized", t->rail_optimized);
  t->name += " (modified by network.node / network.fabric)";
}

topologies::TopologySpec parse_topology(const std::string& yaml, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw ScenarioError(fmt::format("{}:{}:{}: YAML syntax error: {}", source, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  if (!root || !root.IsMap()) throw ScenarioError(fmt::format("{}: a topology must be a mapping (name, node, fabric)", source));
  return read_topology(YamlReader(root, "", [source](const std::string&) { return source; }, nullptr), source);
}

std::vector<std::string> topology_names() {
  std::vector<std::string> out;
  for (const auto& [k, v] : topology_preset_texts()) out.push_back(k);
  return out;
}

topologies::TopologySpec topology_preset(const std::string& name) {
  const auto& texts = topology_preset_texts();
  auto it = texts.find(name);
  if (it == texts.end()) {
    const std::string near = nearest(name, topology_names());
    throw ScenarioError(fmt::format("unknown topology '{}'{}; available: {}", name,
                                    near.empty() ? "" : " (did you mean '" + near + "'?)", join(topology_names())));
  }
  // Parsed once per thread: scenario templates load a preset for every configuration of a sweep.
  thread_local std::map<std::string, topologies::TopologySpec> parsed;
  auto at = parsed.find(name);
  if (at == parsed.end()) at = parsed.emplace(name, parse_topology(it->second, "topologies/presets/" + name + ".yaml")).first;
  return at->second;
}

bool reshapes_to(const topologies::TopologySpec& t, int k) {
  // A smaller board of the same machine (HGX 4-GPU, NVL36) divides it, joined boards (HGX-2's
  // two 8-GPU boards) are a multiple of it; a 3-GPU DGX H100 does not exist. A rack-scale
  // NVLink domain is allocated by compute tray (hardware.md §2: GB200 NVL72, 4 GPUs per
  // tray), so jobs that use 16 of a rack's 18 trays (64 GPUs) fit it.
  const bool trays = t.node_kind == topologies::NodeKind::nvl_domain && k < t.gpus_per_node && k % kGpusPerTray == 0;
  return k >= 1 && (trays || t.gpus_per_node % k == 0 || k % t.gpus_per_node == 0);
}

int nvl_segment_gpus(const topologies::TopologySpec& t, int gpus) {
  if (t.node_kind != topologies::NodeKind::nvl_domain || gpus <= 0 || gpus % kGpusPerTray != 0) return t.gpus_per_node;
  const int trays = gpus / kGpusPerTray, rack = t.gpus_per_node / kGpusPerTray;
  int segment = std::min(trays, rack);
  while (trays % segment != 0) --segment;
  return segment * kGpusPerTray;
}

int allocation_gpus(const topologies::TopologySpec& t) {
  return t.node_kind == topologies::NodeKind::nvl_domain ? kGpusPerTray : t.gpus_per_node;
}

topologies::TopologySpec reshaped(topologies::TopologySpec t, int k) {
  if (k == t.gpus_per_node) return t;
  const double nics_per_gpu = double(t.nics_per_node) / t.gpus_per_node;
  t.nics_per_node = std::max(1, int(std::lround(nics_per_gpu * k)));
  t.gpus_per_pcie_switch = std::min(t.gpus_per_pcie_switch, k);
  t.gpus_per_node = k;
  t.name = fmt::format("{} reshaped to {} GPUs per node", t.name, k);
  return t;
}

// The hardware profiles whose node.default_topology is `topology`, in name order.
std::vector<std::string> profiles_shipping_in(const std::string& topology) {
  std::vector<std::string> out;
  for (const auto& [name, text] : hardware_preset_texts()) {
    const YAML::Node node = YAML::Load(text)["node"];
    if (node && node["default_topology"] && node["default_topology"].as<std::string>() == topology) out.push_back(name);
  }
  return out;
}

std::string hardware_topology_warning(const Scenario& s) {
  if (s.network.differs_from_default.empty()) return "";
  const std::string& topo = s.network.topology.name;
  const std::vector<std::string> native = profiles_shipping_in(topo);
  std::string names;
  for (const auto& n : native) names += (names.empty() ? "" : ", ") + n;
  const std::string hw = s.hardware_preset.empty() ? s.gpu.name : s.hardware_preset;
  return fmt::format("warning: hardware {} on topology {}: {}; the GPU keeps the {} profile's clocks and {:.0f} W board "
                     "power, only the network changes ({})",
                     hw, topo, s.network.differs_from_default, hw, s.gpu.power_w,
                     native.empty() ? fmt::format("no hardware profile ships in {}, so the clocks and TDP of the part it "
                                                  "holds are not used", topo)
                                    : fmt::format("{} {} in {}", names, native.size() == 1 ? "ships" : "ship", topo));
}

}  // namespace clustersim::scenarios
