#include "scenarios/load.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include "hardware/attention_model.hpp"
#include "hardware/ep_kernels.hpp"
#include "models/pipeline.hpp"
#include "scenarios/error.hpp"
#include "scenarios/fitted.hpp"
#include "scenarios/load_model.hpp"
#include "scenarios/load_moe.hpp"
#include "scenarios/load_node.hpp"
#include "scenarios/load_offload.hpp"
#include "scenarios/load_ramp.hpp"
#include "scenarios/load_recipe.hpp"
#include "scenarios/load_reliability.hpp"
#include "scenarios/plan_rules.hpp"
#include "scenarios/preset_files.hpp"
#include "scenarios/presets.hpp"
#include "scenarios/topology_load.hpp"
#include "scenarios/yaml_reader.hpp"
#include "topologies/topology.hpp"

namespace clustersim::scenarios {

namespace {

// yaml-cpp keeps every entry of a mapping whose key repeats and reads the first; a user who wrote the
// key twice meant one of them, so a repeated key is an error.
void reject_duplicate_keys(const YAML::Node& node, const std::string& source) {
  if (node.IsSequence())
    for (const auto& item : node) reject_duplicate_keys(item, source);
  if (!node.IsMap()) return;
  std::map<std::string, YAML::Mark> seen;
  for (const auto& kv : node) {
    if (kv.first.IsScalar()) {
      auto [it, fresh] = seen.emplace(kv.first.Scalar(), kv.first.Mark());
      if (!fresh)
        throw ScenarioError(fmt::format("{}:{}:{}: {}: duplicate key (first at line {}); write it once", source,
                                        kv.first.Mark().line + 1, kv.first.Mark().column + 1, kv.first.Scalar(),
                                        it->second.line + 1));
    }
    reject_duplicate_keys(kv.second, source);
  }
}

// The 1-based line of the second document's start: the second '---' line, or the first when
// the text does not open with one.
int second_document_line(const std::string& text) {
  int line = 1, seen = 0;
  bool content = false;
  for (std::size_t from = 0; from < text.size(); ++line) {
    const std::size_t end = std::min(text.find('\n', from), text.size());
    const std::string l = text.substr(from, end - from);
    if (l.rfind("---", 0) == 0) {
      if (++seen == 2 || content) return line;
    } else if (!l.empty() && l[0] != '#') {
      content = true;
    }
    from = end + 1;
  }
  return 1;
}

}  // namespace

YAML::Node parse_scenario_yaml(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    const std::vector<YAML::Node> docs = YAML::LoadAll(text);
    if (docs.size() > 1)
      throw ScenarioError(fmt::format("{}:{}: a second YAML document ('---'); a scenario is one document, split it into "
                                      "files", source, second_document_line(text)));
    if (!docs.empty()) root = docs.front();
  } catch (const YAML::Exception& e) {
    throw ScenarioError(fmt::format("{}:{}:{}: YAML syntax error: {}", source, e.mark.line + 1,
                                    e.mark.column + 1, e.msg));
  }
  reject_duplicate_keys(root, source);
  return root;
}

namespace {


constexpr double kMaxFlops = 1e18, kMaxBytes = 1e15, kMaxBw = 1e14;

YAML::Node parse_yaml(const std::string& text, const std::string& source) {
  return parse_scenario_yaml(text, source);
}

// Parsing the embedded preset text dominates loading a scenario (≈0.6 ms for a hardware
// profile); sweeps load thousands, so each thread parses a preset once. The node is only read
// (YamlReader uses const access; merged() clones it).
YAML::Node parsed_preset(const std::string& text, const std::string& file) {
  thread_local std::map<std::string, YAML::Node> cache;
  auto it = cache.find(file);
  if (it == cache.end()) it = cache.emplace(file, parse_yaml(text, file)).first;
  return it->second;
}

// A preset used by name (no keys overridden) always reads to the same spec.
template <class Spec, class Read>
Spec read_preset_once(const std::string& preset, const std::map<std::string, std::string>& presets, Read read) {
  if (!presets.count(preset)) return read();
  thread_local std::map<std::string, Spec> cache;
  auto it = cache.find(preset);
  if (it == cache.end()) it = cache.emplace(preset, read()).first;
  return it->second;
}

std::vector<std::string> names_of(const std::map<std::string, std::string>& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m) out.push_back(k);
  return out;
}

// Deep-merges `over` into a copy of `base` (mappings merge key by key; anything else replaces).
YAML::Node merged(const YAML::Node& base, const YAML::Node& over) {
  YAML::Node out = YAML::Clone(base);
  for (const auto& kv : over) {
    if (!kv.first.IsScalar()) continue;  // reported by YamlReader::allow_only
    const std::string k = kv.first.Scalar();
    if (kv.second.IsMap() && out[k] && out[k].IsMap()) out[k] = merged(out[k], kv.second);
    else out[k] = kv.second;
  }
  return out;
}

// "models/presets" -> "model", "hardware/profiles" -> "hardware": the section a preset file may hold.
std::string kind_of(const std::string& folder) { return folder.substr(0, folder.find('/')) == "models" ? "model" : "hardware"; }

struct Resolved {
  YAML::Node node;
  std::string preset;  // preset name or "inline"
  std::function<std::string(const std::string&)> source_of;
};

// A `model:` / `hardware:` value: a preset name, or a mapping with optional `base: <preset>`.
Resolved resolve_preset(const YamlReader& parent, const std::string& key,
                        const std::map<std::string, std::string>& presets, const std::string& folder,
                        const std::string& scenario_source) {
  if (!parent.has(key)) parent.fail(key, fmt::format("is required; a preset name ({}) or a mapping", join(names_of(presets))));
  const YAML::Node value = parent.raw(key);
  auto preset_node = [&](const std::string& name, const std::string& at_key) {
    if (names_a_file(name)) return read_preset_file(name, kind_of(folder), scenario_source, parent.where(at_key)).node;
    auto it = presets.find(name);
    if (it == presets.end()) {
      const std::string near = nearest(name, names_of(presets));
      parent.fail(at_key, fmt::format("unknown preset '{}'{}; available: {}", name,
                                      near.empty() ? "" : " (did you mean '" + near + "'?)",
                                      join(names_of(presets))));
    }
    return parsed_preset(it->second, folder + "/" + name + ".yaml");
  };
  if (value.IsScalar()) {
    const std::string name = value.Scalar();
    if (names_a_file(name)) {
      PresetFile f = read_preset_file(name, kind_of(folder), scenario_source, parent.where(key));
      return {f.node, f.name, [path = f.path](const std::string&) { return path; }};
    }
    const std::string file = folder + "/" + name + ".yaml";
    return {preset_node(name, key), name, [file](const std::string&) { return file; }};
  }
  if (!value.IsMap()) parent.fail(key, "expected a preset name or a mapping");
  if (value["base"]) {
    const std::string name = value["base"].Scalar();
    const std::string file = folder + "/" + name + ".yaml";
    YAML::Node over = YAML::Clone(value);
    over.remove("base");
    YAML::Node user = value;
    return {merged(preset_node(name, key + ".base"), over), name + "+overrides",
            [file, user, scenario_source](const std::string& k) { return user[k] ? scenario_source : file; }};
  }
  return {value, "inline", [scenario_source](const std::string&) { return scenario_source; }};
}

// A profile's comma-separated data GPUs of a table of measured rows (`key`: attention_data,
// ep_kernel_data), in order; each must have rows there.
std::vector<std::string> data_gpus(const YamlReader& r, const std::string& key,
                                   const std::function<bool(const std::string&)>& has_rows, const char* allowed) {
  std::vector<std::string> out;
  std::stringstream names(r.text(key, ""));
  for (std::string d; std::getline(names, d, ',');) {
    d.erase(0, d.find_first_not_of(' '));
    d.erase(d.find_last_not_of(' ') + 1);
    if (d.empty()) continue;
    if (!has_rows(d)) r.fail(key, fmt::format("'{}' has no rows; allowed: {}", d, allowed));
    out.push_back(d);
  }
  return out;
}

hardware::GpuSpec read_gpu(const YamlReader& r, const std::string& name) {
  r.allow_only({"name",
                "description",
                "sms",
                "peak",
                "memory",
                "memory_bandwidth",
                "l2",
                "gemm_mamf",
                "gemm_mamf_fp8",
                "gemm_tile",
                "gemm_k_overhead",
                "hbm_efficiency",
                "attention",
                "kernel_gap",
                "comm_sms",
                "runtime_reserved",
                "node",
                "compute_sustained_fraction",
                "attention_default",
                "attention_data",
                "gemm_mamf_nvfp4",
                "memory_latency",
                "sustained_clock_ratio",
                "power",
                "in_step_rate_ratio",
                "host_launch",
                "die",
                "ep_kernel_data"});
  hardware::GpuSpec g;
  g.name = r.text("name", name);
  g.description = r.text("description", g.name);
  g.die = r.text("die", g.name);
  g.sms = r.integer("sms", 0, 1, 10000);
  if (!g.sms) r.fail("sms", "is required");
  const YamlReader peak = r.child("peak");
  peak.allow_only({"fp32", "tf32", "bf16", "fp16", "fp8", "mxfp8", "nvfp4"});
  for (std::size_t i = 0; i < hardware::kPrecisionNames.size(); ++i)
    g.peak_flops[i] = units::FlopPerSecond(peak.quantity(hardware::kPrecisionNames[i], Dimension::flop_rate, 0, 0, kMaxFlops));
  if (g.peak(hardware::Precision::bf16).si() <= 0 && g.peak(hardware::Precision::fp16).si() <= 0)
    peak.fail("bf16", "a BF16 or FP16 peak above zero is required");
  g.hbm_capacity = units::Bytes(r.quantity("memory", Dimension::bytes, 0, 1e6, kMaxBytes));
  g.hbm_bandwidth = units::BytesPerSecond(r.quantity("memory_bandwidth", Dimension::bandwidth, 0, 1e6, kMaxBw));
  if (g.hbm_capacity.si() <= 0) r.fail("memory", "is required");
  if (g.hbm_bandwidth.si() <= 0) r.fail("memory_bandwidth", "is required");
  g.l2_capacity = units::Bytes(r.quantity("l2", Dimension::bytes, 0, 0, kMaxBytes));
  auto anchor = [&](const std::string& key) {
    hardware::GemmAnchor a;
    if (!r.has(key)) return a;
    const YamlReader c = r.child(key);
    c.allow_only({"rate", "shape"});
    a.rate = units::FlopPerSecond(c.quantity("rate", Dimension::flop_rate, 0, 1, kMaxFlops));
    auto s = c.numbers("shape", 3, 1, 1e7);
    a.m = s[0], a.n = s[1], a.k = s[2];
    return a;
  };
  g.gemm_anchor = anchor("gemm_mamf");
  g.gemm_anchor_fp8 = anchor("gemm_mamf_fp8");
  g.gemm_anchor_nvfp4 = anchor("gemm_mamf_nvfp4");
  if (g.gemm_anchor.rate.si() <= 0) r.fail("gemm_mamf", "is required (measured best GEMM rate and its shape)");
  if (r.has("gemm_tile")) {
    auto t = r.numbers("gemm_tile", 2, 8, 1024);
    g.gemm_tile_m = int(t[0]), g.gemm_tile_n = int(t[1]);
  }
  g.gemm_k_overhead = r.number("gemm_k_overhead", 0, 0, 1e5);
  g.hbm_efficiency = r.number("hbm_efficiency", 0.9, 0.01, 1.0);
  const YamlReader a = r.child("attention");
  a.allow_only({"fwd_max", "fwd_half_seq", "bwd_max", "bwd_half_seq"});
  g.attention.fwd_max = a.number("fwd_max", 0.6, 0.01, 1.0);
  g.attention.fwd_half_seq = a.number("fwd_half_seq", 256, 0, 1e6);
  g.attention.bwd_max = a.number("bwd_max", 0.5, 0.01, 1.0);
  g.attention.bwd_half_seq = a.number("bwd_half_seq", 400, 0, 1e6);
  g.default_attention = static_cast<hardware::AttentionImpl>(r.choice(
      "attention_default", {hardware::kAttentionImplNames.begin(), hardware::kAttentionImplNames.end()}, 1));
  g.attention_data = data_gpus(
      r, "attention_data", [](const std::string& d) { return hardware::attention_data_peak(d).si() > 0; },
      "A100, H100, H200, B200, GB200, GB300, Blackwell-2.5PF, Blackwell-sm100");
  g.warp_mma_slowdown = hardware::warp_mma_slowdown(g.attention_data);
  g.ep_kernel_data = data_gpus(r, "ep_kernel_data", hardware::ep_kernel_device_known, "B200, GB200, H800");
  g.memory_latency = units::Seconds(r.quantity("memory_latency", Dimension::time, 0, 0, 1e-3));
  g.sustained_clock_ratio = r.number("sustained_clock_ratio", 1.0, 0.1, 1.0);
  g.in_step_rate_ratio = r.number("in_step_rate_ratio", 1.0, 0.1, 1.0);
  g.power_w = r.number("power", 0, 0, 1e5);
  g.kernel_gap = units::Seconds(r.quantity("kernel_gap", Dimension::time, 0, 0, 1e-2));
  g.host_launch = units::Seconds(r.quantity("host_launch", Dimension::time, hardware::kX86HostLaunchS, 1e-7, 1e-2));
  // Up to the calibration bound (hardware/gpu_spec.hpp): a cluster may lose less in a step than
  // the in-step ratio measured on attention (in_step_rate_ratio). A shipped profile sets none: its
  // die's fitted value comes from hardware/fitted.yaml (scenarios/fitted.hpp); a user's profile may.
  g.compute_sustained_fraction = r.number("compute_sustained_fraction", fitted_value(g.die, "compute_sustained_fraction").value_or(1.0),
                                          0.05, hardware::kMaxComputeSustainedFraction);
  g.comm_sms = r.integer("comm_sms", 16, 0, g.sms - 1);
  g.runtime_reserved = units::Bytes(r.quantity("runtime_reserved", Dimension::bytes, 0, 0, kMaxBytes));
  const YamlReader n = r.child("node");
  for (const char* moved : {"gpus_per_node", "nvlink_bandwidth", "nvlink_efficiency", "pcie_bandwidth", "pcie_efficiency",
                            "nics_per_node", "nic_bandwidth", "nic_efficiency"})
    if (n.has(moved))
      n.fail(moved, fmt::format("network data lives in the topology now: set network.node.{} (or name a topology in "
                                "topologies/presets) instead", std::string(moved) == "gpus_per_node" ? "gpus" : moved));
  n.allow_only({"default_topology"});
  if (!n.has("default_topology"))
    n.fail("default_topology", "is required: the topology preset this GPU usually ships in; available: " +
                                   join(topology_names()));
  g.node.default_topology = n.text("default_topology", "");
  if (!topology_preset_texts().count(g.node.default_topology)) {
    const std::string near = nearest(g.node.default_topology, topology_names());
    n.fail("default_topology", fmt::format("unknown topology '{}'{}; available: {}", g.node.default_topology,
                                           near.empty() ? "" : " (did you mean '" + near + "'?)", join(topology_names())));
  }
  return g;
}

// The value at scalar key `key` of mapping `map` when it has one, found as YamlReader::entry
// does (yaml-cpp's operator[] converts `key` into a temporary node for every entry it passes).
std::optional<YAML::Node> existing_entry(YAML::Node& map, const std::string& key) {
  if (!map.IsMap()) return std::nullopt;
  for (auto kv : map)
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
  return std::nullopt;
}

// The node of a patch value (a PatchYaml parsed here, at the edge).
YAML::Node node_of(const PatchEntry& e) {
  if (std::holds_alternative<PatchNull>(e.value)) return YAML::Node(YAML::NodeType::Null);
  if (const auto* list = std::get_if<PatchList>(&e.value)) {
    YAML::Node seq(YAML::NodeType::Sequence);
    for (const auto& item : *list) seq.push_back(to_text(item));
    return seq;
  }
  if (const auto* y = std::get_if<PatchYaml>(&e.value)) {
    try {
      return YAML::Load(y->text);
    } catch (const YAML::Exception& ex) {
      throw ScenarioError(fmt::format("{} {}: value is not valid YAML: {}", e.origin.empty() ? "--set" : e.origin, e.path, ex.msg));
    }
  }
  return YAML::Node(to_text(e.value));
}

void apply_entry(YAML::Node& root, const PatchEntry& e, Origins* origins) {
  const std::string& path = e.path;
  const YAML::Node value = node_of(e);
  const std::string origin = e.origin.empty() ? "--set" : e.origin;
  // The parts between dots, as std::getline splits them (a trailing dot adds no empty part).
  std::vector<std::string> parts;
  for (std::size_t from = 0; from < path.size();) {
    const std::size_t dot = std::min(path.find('.', from), path.size());
    parts.push_back(path.substr(from, dot - from));
    from = dot + 1;
  }
  // A preset name followed by a deeper key (model.layers=40) becomes {base: name, layers: 40}.
  std::vector<YAML::Node> chain{root};
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node cur = chain.back();
    const auto found = existing_entry(cur, parts[i]);
    YAML::Node next = found ? *found : cur[parts[i]];
    if (next && next.IsScalar() && i == 0 && (parts[0] == "model" || parts[0] == "hardware")) {
      YAML::Node expanded(YAML::NodeType::Map);
      expanded["base"] = next.Scalar();
      cur[parts[i]] = expanded;
      next = cur[parts[i]];
    } else if (!next || next.IsNull()) {
      cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
      next = cur[parts[i]];
    } else if (!next.IsMap()) {
      throw ScenarioError(fmt::format("{} {}: '{}' is not a mapping", origin, path, parts[i]));
    }
    chain.push_back(next);
  }
  // A new key is appended as operator[] would append it, without its search through the keys.
  if (auto at = existing_entry(chain.back(), parts.back())) *at = value;
  else chain.back().force_insert(parts.back(), value);
  if (!e.origin.empty()) (*origins)[path] = e.origin;
}

// `placement: [tp, cp, dp, pp]` (or "tp,cp,dp,pp"): the rank order, innermost first.
topologies::PlacementOrder read_placement(const YamlReader& net) {
  const YAML::Node n = net.raw("placement");
  std::vector<std::string> names;
  if (n.IsSequence()) {
    for (const auto& item : n) names.push_back(item.IsScalar() ? item.Scalar() : "?");
  } else if (n.IsScalar()) {
    std::stringstream ss(n.Scalar());
    for (std::string part; std::getline(ss, part, ',');) {
      part.erase(0, part.find_first_not_of(' '));
      part.erase(part.find_last_not_of(' ') + 1);
      names.push_back(part);
    }
  }
  const std::vector<std::string> dims = {"tp", "cp", "pp", "dp"};
  topologies::PlacementOrder order{};
  std::set<std::string> seen;
  bool ok = names.size() == 4;
  for (std::size_t i = 0; ok && i < 4; ++i) {
    auto it = std::find(dims.begin(), dims.end(), names[i]);
    ok = it != dims.end() && seen.insert(names[i]).second;
    if (ok) order[i] = static_cast<topologies::GroupDim>(it - dims.begin());
  }
  if (!ok) net.fail("placement", "expected tp, cp, pp and dp once each, innermost first, e.g. [tp, cp, dp, pp]");
  return order;
}

// The hardware profile's default topology, reshaped to `cluster.gpus_per_node` GPUs per node
// when that differs (keeping its NICs per GPU, at least one NIC per node); without that key a
// rack-scale NVLink domain takes the job's SLURM segment (nvl_segment_gpus).
topologies::TopologySpec default_topology(const YamlReader& cluster, Scenario& sc) {
  topologies::TopologySpec t = topology_preset(sc.gpu.node.default_topology);
  const int segment = nvl_segment_gpus(t, sc.cluster.gpus);
  sc.cluster.segment_assumed = !cluster.has("gpus_per_node") && segment != t.gpus_per_node;
  const int k = cluster.integer("gpus_per_node", segment, 1, 1024);
  if (k != t.gpus_per_node) {
    if (!reshapes_to(t, k))
      cluster.fail("gpus_per_node", fmt::format("{} GPUs per node does not fit {}'s {}-GPU node ({}); use a divisor or "
                                                "multiple of {}, or name a topology with that node size (network.topology)",
                                                k, sc.gpu.name, t.gpus_per_node, t.name, t.gpus_per_node));
    t = reshaped(t, k);
  }
  return t;
}

// `network: {topology: NAME, algorithm: auto|ring|tree|hierarchical|nvls, placement: [...],
// node: {...}, fabric: {...}}`; without a topology, the hardware profile's default topology
// (node.default_topology); node / fabric override its link rates (override_topology).
void read_network(const YamlReader& top, Scenario* sc) {
  const YamlReader net = top.child("network");
  net.allow_only({"topology", "algorithm", "placement", "node", "fabric"});
  if (net.has("placement")) sc->network.placement = read_placement(net), sc->network.placement_assumed = false;
  const YamlReader cluster = top.child("cluster");
  // The topology is named as network.topology or, as a shorthand, cluster.topology.
  if (net.has("topology") && cluster.has("topology") && net.text("topology", "") != cluster.text("topology", ""))
    cluster.fail("topology", fmt::format("is '{}' but network.topology is '{}'; name it once",
                                         cluster.text("topology", ""), net.text("topology", "")));
  const YamlReader& named = net.has("topology") ? net : cluster;
  if (named.has("topology")) {
    const std::string name = named.text("topology", "");
    if (names_a_file(name)) {
      const PresetFile f = read_preset_file(name, "topology", sc->source, named.where("topology"));
      sc->network.topology = read_topology(YamlReader(f.node, "", [p = f.path](const std::string&) { return p; }, nullptr), f.name);
    } else if (!topology_preset_texts().count(name)) {
      const std::string near = nearest(name, topology_names());
      named.fail("topology", fmt::format("unknown topology '{}'{}; available: {}", name,
                                       near.empty() ? "" : " (did you mean '" + near + "'?)", join(topology_names())));
    } else {
      sc->network.topology = topology_preset(name);
    }
    const int k = sc->network.topology.gpus_per_node;
    if (cluster.has("gpus_per_node") && cluster.integer("gpus_per_node", k, 1, 1024) != k)
      cluster.fail("gpus_per_node", fmt::format("is {} but topology '{}' has {} GPUs per node; omit it or make them agree",
                                                cluster.integer("gpus_per_node", k, 1, 1024), name, k));
    // A GPU in a machine of another size is a different product (an NVL72 GPU in an 8-GPU box).
    const topologies::TopologySpec usual = topology_preset(sc->gpu.node.default_topology);
    if (usual.gpus_per_node != k)
      named.fail("topology", fmt::format("'{}' has {} GPUs per node but {} ships in nodes of {} ({}); "
                                         "pick a topology with {} GPUs per node",
                                         name, k, sc->gpu.name, usual.gpus_per_node, usual.name, usual.gpus_per_node));
    if (sc->network.topology.node_kind != usual.node_kind || sc->network.topology.nvlink_bandwidth.si() != usual.nvlink_bandwidth.si())
      sc->network.differs_from_default = fmt::format(
          "{} ships in {} ({}, {:.0f} GB/s per GPU); this network is {} ({:.0f} GB/s)", sc->gpu.name, usual.name,
          topologies::name(usual.node_kind), usual.nvlink_bandwidth.si() / 1e9, topologies::name(sc->network.topology.node_kind),
          sc->network.topology.nvlink_bandwidth.si() / 1e9);
    const int segment = nvl_segment_gpus(sc->network.topology, sc->cluster.gpus);
    if (!cluster.has("gpus_per_node") && segment != sc->network.topology.gpus_per_node) {
      sc->network.topology = reshaped(sc->network.topology, segment);
      sc->cluster.segment_assumed = true;
    }
  } else {
    sc->network.topology = default_topology(cluster, *sc);
  }
  override_topology(net, &sc->network.topology);
  sc->cluster.gpus_per_node = sc->network.topology.gpus_per_node;
  try {
    topologies::Topology::validate(sc->network.topology, 1);
  } catch (const std::invalid_argument& e) {
    cluster.fail("gpus_per_node", fmt::format("the nodes cannot be wired as topology '{}': {}",
                                              sc->network.topology.name, e.what()));
  }
  sc->network.algorithm = static_cast<topologies::AlgorithmChoice>(
      net.choice("algorithm", {topologies::kAlgorithmChoiceNames.begin(), topologies::kAlgorithmChoiceNames.end()}, 0));
}

// `overlay`: the patch as read_through() built it, read through instead of applied to `root`.
Scenario build(YAML::Node root, const std::string& source, const ScenarioPatch& patch, YAML::Node marks,
               const Overlay* overlay = nullptr) {
  if (!root || root.IsNull()) throw ScenarioError(fmt::format("{}: the scenario is empty", source));
  if (!root.IsMap()) throw ScenarioError(fmt::format("{}: a scenario must be a mapping of keys (name, model, hardware, ...)", source));
  Origins overridden;
  if (overlay) {
    for (const auto& e : patch.entries()) overridden[e.path] = e.origin;
  } else {
    for (const auto& e : patch.entries()) apply_entry(root, e, &overridden);
  }
  const YamlReader top(
      root, "", [source](const std::string&) { return source; }, &overridden, marks, overlay);
  top.allow_only({"name", "model", "hardware", "cluster", "parallelism", "training", "network", "reliability", "data"});

  Scenario sc;
  sc.source = source;
  sc.name = top.text("name", source);
  Resolved model = resolve_preset(top, "model", model_preset_texts(), "models/presets", source);
  sc.model_preset = model.preset;
  sc.model = read_preset_once<models::ModelSpec>(model.preset, model_preset_texts(), [&] {
    return read_model(YamlReader(model.node, "model", model.source_of, &overridden, lookup(marks, "model")), model.preset);
  });
  Resolved hw = resolve_preset(top, "hardware", hardware_preset_texts(), "hardware/profiles", source);
  sc.hardware_preset = hw.preset;
  sc.gpu = read_preset_once<hardware::GpuSpec>(hw.preset, hardware_preset_texts(), [&] {
    return read_gpu(YamlReader(hw.node, "hardware", hw.source_of, &overridden, lookup(marks, "hardware")), hw.preset);
  });

  const YamlReader cluster = top.child("cluster");
  cluster.allow_only({"gpus", "gpus_per_node", "topology"});
  if (!cluster.has("gpus")) cluster.fail("gpus", "is required (total GPUs in the job)");
  sc.cluster.gpus = cluster.integer("gpus", 0, 1, 10000000);
  // Bound the work by the input: the network's collective plans route every DP member, so their
  // cost grows with the square of the GPU count (on one core: 65,536 H100 ~8 s; 131,072 ~23 s;
  // 100,000 with the automatic algorithm over a minute).
  if (sc.cluster.gpus > kMaxSimulatedGpus)
    cluster.fail("gpus", fmt::format("{} GPUs: at most {} are simulated (network routing time grows with the square of "
                                     "the GPU count); plan larger clusters from a smaller one's per-GPU throughput",
                                     sc.cluster.gpus, kMaxSimulatedGpus));
  read_network(top, &sc);
  // A server (NVSwitch box, PCIe, xGMI mesh) is scheduled whole; a rack-scale NVLink domain is
  // not (published GB200 NVL72 runs use 128, 256 and 512 GPUs: data/validation/published.csv DGXC-L405B25).
  const int per_node = sc.cluster.gpus_per_node;
  const bool whole_nodes = sc.network.topology.node_kind != topologies::NodeKind::nvl_domain;
  if (whole_nodes && sc.cluster.gpus > per_node && sc.cluster.gpus % per_node != 0)
    cluster.fail("gpus", fmt::format("{} GPUs are not whole nodes of {}; use a multiple of {} (or at most {} GPUs, part of one node)",
                                     sc.cluster.gpus, per_node, per_node, per_node));

  const YamlReader par = top.child("parallelism");
  par.allow_only({"tp", "pp", "cp", "dp", "zero_stage", "fsdp", "vpp", "schedule", "pp_layers",
                  "sequence_parallel", "tp_comm_overlap", "tp_across_nodes", "pp_comm_overlap",
                  "fsdp_reshard_after_forward", "ep", "etp"});
  auto& p = sc.parallel;
  p.tp = par.integer("tp", 1, 1, 1024);
  p.pp = par.integer("pp", 1, 1, 4096);
  p.cp = par.integer("cp", 1, 1, 4096);
  p.zero_stage = par.integer("zero_stage", 0, 0, 3);
  if (par.boolean("fsdp", false)) {
    if (par.has("zero_stage") && p.zero_stage != 3)
      par.fail("fsdp", fmt::format("fsdp: true means ZeRO-3 but zero_stage is {}; omit zero_stage or set it to 3", p.zero_stage));
    p.zero_stage = 3;
  }
  p.sequence_parallel = par.boolean("sequence_parallel", false);
  p.tp_comm_overlap = par.boolean("tp_comm_overlap", false);
  p.tp_across_nodes = par.boolean("tp_across_nodes", false);
  p.fsdp_reshard_after_forward =
      par.enum_choice("fsdp_reshard_after_forward", models::kFsdpReshardNames, models::FsdpReshard::automatic);
  if (par.has("fsdp_reshard_after_forward") && p.zero_stage != 3)
    par.fail("fsdp_reshard_after_forward",
             fmt::format("applies to ZeRO-3 (fsdp: true) only, but zero_stage is {}", p.zero_stage));
  p.vpp = par.integer("vpp", 1, 1, 1024);
  p.schedule = par.enum_choice("schedule", models::kPipelineScheduleNames,
                               p.vpp > 1 ? models::PipelineSchedule::interleaved : models::PipelineSchedule::one_f_one_b);
  if (p.v_shape()) {
    // DualPipeV and ZB-V: two model chunks per rank in a V (vpp 2 whether given or not).
    const char* sched = models::name(p.schedule);
    if (par.has("vpp") && p.vpp != 2)
      par.fail("vpp", fmt::format("vpp = {}: {} runs two model chunks per rank; allowed: 2", p.vpp, sched));
    p.vpp = 2;
    if (p.pp < 2) par.fail("schedule", fmt::format("{} needs pp >= 2 pipeline ranks", sched));
  }
  const auto& md = sc.model;
  // A check across two keys blames the model key when the user overrode it (--set, a --vary value).
  auto tp_fail = [&](const std::string& model_key, const std::string& message) {
    if (overridden.count("model." + model_key) && !overridden.count("parallelism.tp"))
      throw ScenarioError(fmt::format("{} model.{}: {}", overridden.at("model." + model_key), model_key, message));
    par.fail("tp", message);
  };
  std::string tp_key;
  if (const std::string why = tp_refusal(md, p.tp, &tp_key); !why.empty()) tp_fail(tp_key, why);
  if (p.tp > sc.cluster.gpus_per_node && !p.tp_across_nodes)
    par.fail("tp", fmt::format("tp = {} spans more than one node of {} GPUs; set parallelism.tp_across_nodes: true to allow it",
                               p.tp, sc.cluster.gpus_per_node));
  // Megatron-LM trains with --overlap-p2p-communication unless told otherwise (arguments.py
  // --no-overlap-p2p-communication, store_false: default on) and turns it off for schedules other
  // than the interleaved one; torchtitan's pipelining runtime likewise overlaps its isend/irecv.
  p.pp_comm_overlap = par.boolean("pp_comm_overlap", p.schedule == models::PipelineSchedule::interleaved);
  sc.pp_comm_overlap_assumed = !par.has("pp_comm_overlap") && p.pp > 1;
  if (p.schedule == models::PipelineSchedule::interleaved && p.vpp < 2)
    par.fail("schedule", "interleaved needs vpp >= 2 model chunks per stage");
  if (p.schedule == models::PipelineSchedule::zb_h1 && p.vpp > 1)
    par.fail("vpp", fmt::format("vpp = {}: zb-h1 runs one model chunk per stage (vpp 1); the V-shaped zero-bubble "
                                "schedule with two chunks per rank is zbv",
                                p.vpp));
  if (p.schedule != models::PipelineSchedule::interleaved && !p.v_shape() && p.vpp > 1)
    par.fail("vpp", fmt::format("vpp = {} needs schedule: interleaved", p.vpp));
  const int vstages = p.pp * p.vpp;
  if (par.has("pp_layers")) {
    const YAML::Node list = par.raw("pp_layers");
    const std::size_t n = list.IsSequence() ? list.size() : 0;
    if (n != std::size_t(p.pp) && n != std::size_t(vstages))
      par.fail("pp_layers", fmt::format("expected a list of pp = {} (or pp*vpp = {}) layer counts", p.pp, vstages));
    int sum = 0;
    for (double v : par.numbers("pp_layers", n, 0, 100000)) p.pp_layers.push_back(int(v)), sum += int(v);
    if (sum != md.layers)
      par.fail("pp_layers", fmt::format("the layer counts add up to {} but the model has {} layers", sum, md.layers));
    if (n != std::size_t(vstages)) {  // per stage: split each stage's layers evenly over its chunks
      std::vector<int> per_vstage(std::size_t(vstages), 0);
      for (int st = 0; st < p.pp; ++st) {
        const int layers = p.pp_layers[std::size_t(st)];
        if (layers % p.vpp != 0)
          par.fail("pp_layers", fmt::format("stage {} has {} layers, not divisible into vpp = {} chunks; give pp*vpp entries", st, layers, p.vpp));
        for (int c = 0; c < p.vpp; ++c) per_vstage[std::size_t(p.vstage_of(st, c))] = layers / p.vpp;
      }
      p.pp_layers = per_vstage;
    }
    // Only the virtual stages that hold the embedding or the loss may hold no layer (Megatron's
    // pipeline layout: a stage of just "E" or just "L"); in the V both are rank 0's.
    for (std::size_t i = 1; i + 1 < p.pp_layers.size(); ++i)
      if (p.pp_layers[i] == 0)
        par.fail("pp_layers", fmt::format("virtual stage {} holds no layer: only the first and the last (the "
                                          "embedding's and the loss's) may",
                                          i));
  } else if (const std::string why = pipeline_refusal(md, p.pp, p.vpp, &p.pp_layers, p.v_shape()); !why.empty()) {
    par.fail(p.vpp > 1 && !p.v_shape() ? "vpp" : "pp", why);  // else pp_layers holds the automatic split, if uneven (models::describe_split)
  }
  const long model_parallel = long(p.tp) * p.pp * p.cp;
  if (sc.cluster.gpus % model_parallel != 0)
    par.fail("tp", fmt::format("tp*pp*cp = {} does not divide cluster.gpus = {}", model_parallel, sc.cluster.gpus));
  const int derived_dp = int(sc.cluster.gpus / model_parallel);
  p.dp = par.integer("dp", derived_dp, 1, 10000000);
  if (p.dp != derived_dp)
    par.fail("dp", fmt::format("dp = {} but cluster.gpus / (tp*pp*cp) = {}; omit dp or make them agree", p.dp, derived_dp));
  read_moe_parallel(par, &sc);

  const YamlReader tr = top.child("training");
  tr.allow_only({"seq_len",
                 "global_batch",
                 "micro_batch",
                 "precision",
                 "recompute",
                 "flash_attention",
                 "fused_elementwise",
                 "overlap_grad_reduce",
                 "overlap_param_gather",
                 "grad_reduce_dtype",
                 "optimizer_dtype",
                 "grad_bucket_params",
                 "tokens",
                 "flops_formula",
                 "cross_entropy",
                 "attention_impl",
                 "fp8_attention",
                 "fp8_recipe",
                 "fp8_auto_filter",
                 "fp8_saved_inputs",
                 "cuda_graphs",
                 "cuda_graph_scope",
                 "moe_dispatcher",
                 "moe_load_imbalance",
                 "moe_a2a_overlap",
                 "moe_router_fusion",
                 "moe_permute_fusion",
                 "moe_grouped_gemm",
                 "moe_dispatcher_sms",
                 "recompute_modules",
                 "recompute_layers",
                 "activation_offload_layers",
                 "activation_fp8_input_store",
                 "bf16_layers",
                 "module_precision",
                 "batch_ramp"});
  auto& t = sc.training;
  for (const char* k : {"seq_len", "global_batch"})
    if (!tr.has(k)) tr.fail(k, "is required");
  t.seq_len = tr.integer("seq_len", 0, 1, 10000000);
  t.global_batch = tr.integer("global_batch", 0, 1, 100000000);
  t.micro_batch = tr.integer("micro_batch", 1, 1, 1000000);
  t.precision = static_cast<hardware::Precision>(
      tr.choice("precision", {"fp32", "tf32", "bf16", "fp16", "fp8", "mxfp8", "nvfp4"}, 2));
  t.recompute = tr.enum_choice("recompute", models::kRecomputeNames, models::Recompute::none);
  if (tr.has("recompute_layers")) {
    // Megatron's --recompute-method block: the first N blocks of each model chunk (a pipeline
    // stage's layers, or one of its vpp chunks) are recomputed in full.
    const auto chunks = models::virtual_stage_layers(md.layers, p);
    const int most = *std::max_element(chunks.begin(), chunks.end());
    if (t.recompute != models::Recompute::full)
      tr.fail("recompute_layers", fmt::format("applies only with recompute: full (here: {}); allowed: recompute: full "
                                              "with recompute_layers 0 to {}", models::name(t.recompute), most));
    t.recompute_layers = tr.integer("recompute_layers", -1, 0, 1000000);
    if (t.recompute_layers > most)
      tr.fail("recompute_layers", fmt::format("{} exceeds the {} layers of a pipeline stage{}; allowed: 0 to {}",
                                              t.recompute_layers, most, p.vpp > 1 ? "'s model chunk" : "", most));
  }
  read_recipe_keys(tr, sc.gpu, &t);
  read_bf16_layers(tr, md, p, &t);
  read_module_precision(tr, md, sc.gpu, &t);
  read_moe_training(tr, &sc);
  read_activation_offload(tr, md, p, &t);
  read_activation_fp8_input_store(tr, md, &t);
  t.fused_elementwise = tr.boolean("fused_elementwise", true);
  t.overlap_grad_reduce = tr.boolean("overlap_grad_reduce", true);
  t.overlap_param_gather = tr.boolean("overlap_param_gather", t.overlap_grad_reduce);
  t.grad_reduce_fp32 = tr.choice("grad_reduce_dtype", {"fp32", "bf16"}, 0) == 0;
  t.fp32_optimizer_state = tr.choice("optimizer_dtype", {"fp32", "bf16"}, 0) == 0;
  if (!t.fp32_optimizer_state && (t.precision == hardware::Precision::fp32 || t.precision == hardware::Precision::tf32))
    tr.fail("optimizer_dtype", "bf16 optimizer state needs 16-bit or lower-precision training (precision is fp32/tf32); allowed: fp32");
  t.grad_bucket_params = tr.number("grad_bucket_params", 0, 0, 1e13);
  t.tokens = tr.number("tokens", 0, 0, 1e17);
  t.flops_formula = tr.enum_choice("flops_formula", models::kFlopsFormulaNames, models::FlopsFormula::megatron);
  t.cross_entropy = tr.enum_choice("cross_entropy", models::kCrossEntropyNames, models::CrossEntropy::fp32);
  if (tr.has("batch_ramp")) read_batch_ramp(tr, p, &t);
  if (t.global_batch % (long(t.micro_batch) * p.dp) != 0)
    tr.fail("global_batch", fmt::format("global_batch ({}) must be a multiple of micro_batch × dp ({} × {} = {})",
                                        t.global_batch, t.micro_batch, p.dp, long(t.micro_batch) * p.dp));
  const long micro_batches = t.global_batch / (long(t.micro_batch) * p.dp);
  if (p.schedule == models::PipelineSchedule::dualpipev && micro_batches < 2 * p.pp)
    tr.fail("global_batch", fmt::format("{} micro-batches per step: dualpipev needs at least 2·pp = {} (DualPipeV's rule)",
                                        micro_batches, 2 * p.pp));
  if (p.schedule == models::PipelineSchedule::interleaved && micro_batches % p.pp != 0)
    tr.fail("global_batch", fmt::format("the interleaved schedule needs micro-batches per step ({}) to be a multiple of pp ({})",
                                        micro_batches, p.pp));
  if (p.cp > 1 && t.seq_len % (2 * p.cp) != 0)
    tr.fail("seq_len", fmt::format("seq_len ({}) must be divisible by 2*cp = {} (load-balanced ring attention)", t.seq_len, 2 * p.cp));
  if (micro_batches > 100000)
    tr.fail("global_batch", fmt::format("{} micro-batches per step; at most 100000 are simulated", micro_batches));
  if (!hardware::is_low_precision(t.precision) && sc.gpu.peak(t.precision).si() <= 0) {
    std::vector<std::string> listed;  // the 16-bit and wider precisions the profile has a peak for
    for (std::size_t i = 0; i < hardware::kPrecisionNames.size(); ++i) {
      const auto prec = static_cast<hardware::Precision>(i);
      if (!hardware::is_low_precision(prec) && sc.gpu.peak(prec).si() > 0) listed.push_back(hardware::name(prec));
    }
    tr.fail("precision", fmt::format("{} has no {} peak; train in a precision its profile lists: {} (with plan: --fix "
                                     "training.precision=...)",
                                     sc.gpu.name, hardware::name(t.precision), fmt::join(listed, ", ")));
  }
  // The step graph has 2 (no TP) to ~20 (TP + SP) tasks per block pass; this bounds it to ~10M tasks.
  if (micro_batches * sc.model.layers > 500000)
    tr.fail("global_batch", fmt::format("{} micro-batches x {} layers = {} block passes per step; at most 500000 are "
                                        "simulated (raise training.micro_batch)", micro_batches, sc.model.layers,
                                        micro_batches * sc.model.layers));
  if (hardware::is_low_precision(t.precision) && sc.gpu.peak(t.precision).si() <= 0)
    tr.fail("precision", fmt::format("{} has no {} Tensor Cores; allowed: {}", sc.gpu.name, upper_name(t.precision),
                                     precisions_of(sc.gpu)));
  sc.reliability = read_reliability(top.child("reliability"));
  sc.data = read_data(top.child("data"), t.seq_len);
  return sc;
}

}  // namespace

Scenario load_scenario_string(const std::string& yaml, const std::string& source_name, const ScenarioPatch& overrides) {
  YAML::Node root = parse_yaml(yaml, source_name);
  return build(root, source_name, overrides, root);  // the tree is its own marks (overrides name their origin)
}

Scenario load_scenario_string(const std::string& yaml, const std::string& source_name,
                              const std::vector<std::string>& overrides) {
  return load_scenario_string(yaml, source_name, ScenarioPatch::parse(overrides));
}

std::vector<std::string> unmapped_keys(const YAML::Node& root) {
  std::vector<std::string> keys;
  if (root.IsMap())
    for (const auto& kv : root)
      if (kv.first.IsScalar() && !kv.second.IsMap() && !kv.second.IsNull()) keys.push_back(kv.first.Scalar());
  return keys;
}

namespace {

// node_of for a scalar or list value read through: the node of each value text is made once per
// thread (a sweep or plan sets the same few values again and again) and only ever read.
YAML::Node shared_node_of(const PatchEntry& e) {
  if (std::holds_alternative<PatchNull>(e.value)) return node_of(e);
  thread_local std::map<std::pair<bool, std::string>, YAML::Node> made;
  const bool list = std::holds_alternative<PatchList>(e.value);
  auto key = std::make_pair(list, to_text(e.value));
  auto it = made.find(key);
  if (it == made.end()) {
    if (made.size() >= 4096) made.clear();  // a bound for long sessions (Python) that vary values freely
    it = made.emplace(std::move(key), node_of(e)).first;
  }
  return it->second;
}

// The overlay of `patch` when reading through it gives what applying it gives, else nullopt:
// every entry names its origin (so errors cite it, not the file's line of the value it replaced),
// holds a scalar, a list or null, sets a top-level key or a key one level into a mapping that
// is not the model's or the hardware's (those merge with presets: apply_entry), and no entry's
// path is another's or lies below it.
std::optional<Overlay> read_through(const std::vector<std::string>& unmapped, const ScenarioPatch& patch) {
  Overlay top;
  auto taken = [&](const std::string& key) {
    return std::find(top.order.begin(), top.order.end(), key) != top.order.end();
  };
  for (const auto& e : patch.entries()) {
    if (e.origin.empty() || std::holds_alternative<PatchYaml>(e.value)) return std::nullopt;
    const std::size_t dot = e.path.find('.');
    if (dot == std::string::npos) {
      if (e.path.empty() || taken(e.path)) return std::nullopt;
      top.values.emplace_back(e.path, shared_node_of(e));
      top.order.push_back(e.path);
      continue;
    }
    const std::string section = e.path.substr(0, dot), key = e.path.substr(dot + 1);
    if (section.empty() || key.empty() || key.find('.') != std::string::npos || section == "model" ||
        section == "hardware")
      return std::nullopt;
    if (std::find(unmapped.begin(), unmapped.end(), section) != unmapped.end())
      return std::nullopt;  // a key under a scalar or a list: apply_entry's error
    auto in_top =
        std::find_if(top.sections.begin(), top.sections.end(), [&](const auto& s) { return s.key == section; });
    if (in_top == top.sections.end()) {
      if (taken(section)) return std::nullopt;
      top.order.push_back(section);
      in_top = top.sections.insert(top.sections.end(), {section, {}});
    }
    Overlay* keys = &in_top->keys;
    if (std::find(keys->order.begin(), keys->order.end(), key) != keys->order.end()) return std::nullopt;
    keys->values.emplace_back(key, shared_node_of(e));
    keys->order.push_back(key);
  }
  return top;
}

}  // namespace

Scenario load_scenario_shared(const YAML::Node& root, const std::vector<std::string>& unmapped,
                              const std::string& source, const ScenarioPatch& overrides, const YAML::Node& marks) {
  if (const auto overlay = read_through(unmapped, overrides)) return build(root, source, overrides, marks, &*overlay);
  // The copy lost the lines (YAML::Clone); `marks` keeps them for the errors to cite.
  return build(YAML::Clone(root), source, overrides, marks);
}

YAML::Node patch_tree(const ScenarioPatch& scenario) {
  YAML::Node root(YAML::NodeType::Map);
  Origins origins;
  for (const auto& e : scenario.entries()) apply_entry(root, e, &origins);
  return root;
}

Scenario load_scenario(const ScenarioPatch& scenario, const std::string& source_name) {
  // Built from nothing: the entries without an origin are the scenario itself and cite `source_name`.
  return build(YAML::Node(YAML::NodeType::Map), source_name, scenario, YAML::Node(YAML::NodeType::Undefined));
}

Scenario load_scenario_file(const std::string& path, const ScenarioPatch& overrides) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ScenarioError(fmt::format("{}: is a directory; expected a scenario YAML file", path));
  std::ifstream in(path);
  if (!in) throw ScenarioError(fmt::format("{}: cannot open the scenario file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return load_scenario_string(ss.str(), path, overrides);
}

Scenario load_scenario_file(const std::string& path, const std::vector<std::string>& overrides) {
  return load_scenario_file(path, ScenarioPatch::parse(overrides));
}

}  // namespace clustersim::scenarios
