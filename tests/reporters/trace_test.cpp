// The Chrome trace names the kernels inside every block pass and carries memory as a counter.
#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <set>

#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"
#include "reporters/trace.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {
struct Slice {
  double ts, end;
  std::string name, cat;
};

// The trace events of one simulated step of `sc`, as `run --trace` writes them.
YAML::Node trace_events(const scenarios::Scenario& sc) {
  std::vector<models::TimelineEntry> timeline;
  const auto report = scenarios::simulate(sc);
  scenarios::simulate(sc, &timeline);
  return YAML::Load(reporters::chrome_trace(timeline, report))["traceEvents"];  // JSON is YAML; a syntax error throws
}

// The kernel names under each layer's block tasks on the first stage.
std::map<int, std::set<std::string>> kernels_by_layer(const YAML::Node& events) {
  std::map<int, std::set<std::string>> by_layer;
  std::vector<std::tuple<double, double, int>> spans;  // block tasks: [ts, end), layer
  for (const auto& e : events) {
    if (e["ph"].as<std::string>() != "X" || e["cat"].as<std::string>() == "kernel") continue;
    const std::string n = e["name"].as<std::string>();
    const auto at = n.find(" L");
    if (at == std::string::npos || e["pid"].as<int>() != 0) continue;
    const double ts = e["ts"].as<double>();
    spans.emplace_back(ts, ts + e["dur"].as<double>(), std::stoi(n.substr(at + 2)));
  }
  for (const auto& e : events) {
    if (e["ph"].as<std::string>() != "X" || e["cat"].as<std::string>() != "kernel" || e["pid"].as<int>() != 0) continue;
    const double ts = e["ts"].as<double>();
    for (const auto& [a, b, layer] : spans)
      if (ts >= a && ts < b) by_layer[layer].insert(e["name"].as<std::string>());
  }
  return by_layer;
}
}  // namespace

TEST_CASE("the trace nests named kernels in each compute task and adds a memory counter per stage", "[tools][trace]") {
  // Small but with every kind of block task: TP with SP, CP ring steps, two stages, 2 micro-batches.
  const auto sc = scenarios::load_scenario_file(
      std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/7b_256xh100.yaml",
      {"parallelism.tp=2", "parallelism.pp=2", "parallelism.cp=2", "parallelism.sequence_parallel=true",
       "training.global_batch=64", "training.micro_batch=2"});
  const auto report = scenarios::simulate(sc);
  const YAML::Node events = trace_events(sc);
  REQUIRE(events.IsSequence());

  std::map<std::pair<int, int>, std::vector<Slice>> tasks, kernels;  // by (pid, tid)
  std::map<int, double> peak_activations, states;
  std::map<int, int> counter_samples;
  for (const auto& e : events) {
    const auto ph = e["ph"].as<std::string>();
    if (ph == "C") {
      const int pid = e["pid"].as<int>();
      CHECK(e["name"].as<std::string>() == "memory (bytes)");
      const double act = e["args"]["activations"].as<double>();
      CHECK(act >= 0);
      peak_activations[pid] = std::max(peak_activations[pid], act);
      states[pid] = e["args"]["model states"].as<double>();
      ++counter_samples[pid];
      continue;
    }
    if (ph != "X") continue;
    const auto key = std::make_pair(e["pid"].as<int>(), e["tid"].as<int>());
    const double ts = e["ts"].as<double>(), dur = e["dur"].as<double>();
    Slice s{ts, ts + dur, e["name"].as<std::string>(), e["cat"].as<std::string>()};
    (s.cat == "kernel" ? kernels : tasks)[key].push_back(s);
  }
  // Named kernels of the forward and backward passes, each inside a compute task of its thread.
  std::set<std::string> names;
  std::size_t nested = 0, total = 0;
  for (const auto& [key, ks] : kernels) {
    const auto& parents = tasks.at(key);
    for (const auto& k : ks) {
      names.insert(k.name);
      ++total;
      for (const auto& p : parents)
        if ((p.cat == "forward" || p.cat == "backward" || p.cat == "recompute") && p.ts <= k.ts + 1e-6 && k.end <= p.end + 1e-6) {
          ++nested;
          break;
        }
    }
  }
  INFO(total << " kernel slices");
  CHECK(total > 100);
  CHECK(nested == total);
  for (const char* n : {"qkv", "attention", "attention.bwd", "mlp_down", "mlp_down.wgrad", "mlp_gate_up.wgrad", "qkv.dgrad"}) {
    INFO(n);
    CHECK(names.count(n) == 1);
  }
  // A memory counter per stage: model states as the estimate has them, and activations rising
  // to the memory model's peak (the schedule holds exactly the block-micro-batches it counts).
  REQUIRE(report.memory_per_stage.size() == 2);
  for (int s = 0; s < 2; ++s) {
    const auto& m = report.memory_per_stage[std::size_t(s)];
    INFO("stage " << s);
    CHECK(counter_samples[s] > 4);
    CHECK(states[s] == Approx(m.weights_bytes + m.gradients_bytes + m.optimizer_bytes + m.reserved_bytes).epsilon(1e-6));
    CHECK(peak_activations[s] == Approx(m.activations_bytes).epsilon(0.01));
  }
}

namespace {

// The names of the non-kernel slices on each track (thread name -> the names, without place).
std::map<std::string, std::set<std::string>> names_by_track(const scenarios::Scenario& sc) {
  const YAML::Node events = trace_events(sc);
  std::map<std::pair<int, int>, std::string> track;
  for (const auto& e : events)
    if (e["ph"].as<std::string>() == "M" && e["name"].as<std::string>() == "thread_name")
      track[{e["pid"].as<int>(), e["tid"].as<int>()}] = e["args"]["name"].as<std::string>();
  std::map<std::string, std::set<std::string>> out;
  for (const auto& e : events) {
    if (e["ph"].as<std::string>() != "X" || e["cat"].as<std::string>() == "kernel") continue;
    const std::string name = e["name"].as<std::string>();
    out[track.at({e["pid"].as<int>(), e["tid"].as<int>()})].insert(name.substr(0, name.find(' ')));
  }
  return out;
}

}  // namespace

TEST_CASE("the trace names every transfer by its group and collective on its track", "[tools][trace]") {
  const std::string dir = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/";
  // TP with SP, CP ring steps, two stages, the distributed optimizer (ZeRO-1) over DP 2.
  auto dense = names_by_track(scenarios::load_scenario_file(
      dir + "7b_256xh100.yaml", {"cluster.gpus=16", "parallelism.tp=2", "parallelism.pp=2", "parallelism.cp=2",
                                 "parallelism.sequence_parallel=true", "training.global_batch=8", "training.micro_batch=2"}));
  CHECK(dense["tp_comm"] == std::set<std::string>{"tp.all_gather", "tp.reduce_scatter"});
  CHECK(dense["cp_comm"] == std::set<std::string>{"cp.send"});
  CHECK(dense["pp_send_fwd"] == std::set<std::string>{"pp.send"});
  CHECK(dense["pp_send_bwd"] == std::set<std::string>{"pp.send"});
  CHECK(dense["dp_reduce"] == std::set<std::string>{"dp.reduce_scatter"});
  CHECK(dense["dp_gather"] == std::set<std::string>{"dp.all_gather"});
  CHECK(dense["compute"].count("forward") == 1);
  CHECK(dense["compute"].count("backward") == 1);
  // Without SP the row-parallel outputs are all-reduced; without ZeRO so are the gradients.
  auto plain = names_by_track(scenarios::load_scenario_file(
      dir + "7b_256xh100.yaml", {"cluster.gpus=4", "parallelism.tp=2", "parallelism.zero_stage=0",
                                 "training.global_batch=4", "training.micro_batch=2"}));
  CHECK(plain["tp_comm"] == std::set<std::string>{"tp.all_reduce"});
  CHECK(plain["dp_reduce"] == std::set<std::string>{"dp.all_reduce"});
  // MoE: dispatch and combine all-to-alls over the EP group, expert gradients over the expert-DP group.
  auto moe = names_by_track(scenarios::load_scenario_file(
      dir + "gpt_oss_120b_64xh100.yaml", {"cluster.gpus=16", "parallelism.ep=8", "training.global_batch=32",
                                          "model.layers=4", "model.sliding_window=null"}));
  CHECK(moe["ep_comm"] == std::set<std::string>{"ep.all_to_all"});
  CHECK(moe["dp_reduce"].count("edp.reduce_scatter") == 1);
}

TEST_CASE("a zb-h1 trace shows W passes with the wgrad kernels and B passes without them", "[tools][trace][zb]") {
  const auto sc = scenarios::load_scenario_file(
      std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/7b_256xh100.yaml",
      {"parallelism.tp=2", "parallelism.pp=4", "parallelism.sequence_parallel=true", "parallelism.schedule=zb-h1",
       "training.global_batch=256", "training.micro_batch=1"});
  const auto report = scenarios::simulate(sc);
  const YAML::Node events = trace_events(sc);
  std::map<std::pair<int, int>, std::vector<Slice>> tasks, kernels;
  std::map<int, double> peak_activations;
  for (const auto& e : events) {
    const auto ph = e["ph"].as<std::string>();
    if (ph == "C") {
      const int pid = e["pid"].as<int>();
      peak_activations[pid] = std::max(peak_activations[pid], e["args"]["activations"].as<double>());
    }
    if (ph != "X") continue;
    const double ts = e["ts"].as<double>(), dur = e["dur"].as<double>();
    Slice s{ts, ts + dur, e["name"].as<std::string>(), e["cat"].as<std::string>()};
    (s.cat == "kernel" ? kernels : tasks)[{e["pid"].as<int>(), e["tid"].as<int>()}].push_back(s);
  }
  std::map<std::string, std::set<std::string>> kernels_by_pass;  // pass kind -> kernel names inside it
  for (const auto& [key, ks] : kernels)
    for (const auto& k : ks)
      for (const auto& p : tasks.at(key))
        if (p.cat != "kernel" && p.ts <= k.ts + 1e-6 && k.end <= p.end + 1e-6) {
          kernels_by_pass[p.cat].insert(k.name);
          break;
        }
  const auto& w = kernels_by_pass["weight_grad"];
  const auto& b = kernels_by_pass["backward"];
  for (const char* n : {"mlp_down.wgrad", "mlp_gate_up.wgrad", "qkv.wgrad", "attn_out.wgrad", "lm_head.wgrad"}) {
    INFO(n);
    CHECK(w.count(n) == 1);
    CHECK(b.count(n) == 0);
  }
  for (const char* n : {"mlp_down.dgrad", "attention.bwd", "qkv.dgrad"}) {
    INFO(n);
    CHECK(b.count(n) == 1);
    CHECK(w.count(n) == 0);
  }
  // The memory counter follows B and W: its peak is the memory model's on every stage.
  REQUIRE(report.memory_per_stage.size() == 4);
  for (int s = 0; s < 4; ++s) {
    INFO("stage " << s);
    CHECK(peak_activations[s] == Approx(report.memory_per_stage[std::size_t(s)].activations_bytes).epsilon(0.01));
  }
}

TEST_CASE("a hybrid Mamba-2 stack's trace names the SSD kernels in Mamba layers and no attention there", "[tools][trace][mamba]") {
  // Nemotron 3 Nano's pattern starts "MEMEM*": layer 0 is a Mamba-2 mixer, 1 an MoE MLP, 5 attention.
  const auto sc = scenarios::load_scenario_string(
      "name: t\nmodel: nemotron3-nano-30b-a3b\nhardware: h100-sxm\ncluster: {gpus: 8}\nparallelism: {ep: 8}\n"
      "training: {seq_len: 4096, global_batch: 8, micro_batch: 1}\n",
      "t.yaml");
  auto by_layer = kernels_by_layer(trace_events(sc));
  CHECK(by_layer[0].count("ssd.chunk_scan") == 1);
  CHECK(by_layer[0].count("mamba.in_proj") == 1);
  CHECK(by_layer[0].count("attention") == 0);
  CHECK(by_layer[1].count("experts.fc1") == 1);
  CHECK(by_layer[1].count("ssd.chunk_scan") == 0);
  CHECK(by_layer[5].count("attention") == 1);
  CHECK(by_layer[5].count("ssd.chunk_scan") == 0);
}

TEST_CASE("a linear-attention hybrid's trace names the gated DeltaNet kernels in its linear layers only", "[tools][trace][linear]") {
  // Qwen3-Next: layers 0-2 gated DeltaNet + MoE, layer 3 attention + MoE.
  const auto sc = scenarios::load_scenario_string(
      "name: t\nmodel: qwen3-next-80b-a3b\nhardware: h100-sxm\ncluster: {gpus: 8}\nparallelism: {ep: 8}\n"
      "training: {seq_len: 4096, global_batch: 8, micro_batch: 1}\n",
      "t.yaml");
  auto by_layer = kernels_by_layer(trace_events(sc));
  CHECK(by_layer[0].count("gdn.state_pass") == 1);
  CHECK(by_layer[0].count("gdn.in_proj") == 1);
  CHECK(by_layer[0].count("attention") == 0);
  CHECK(by_layer[0].count("experts.fc1") == 1);
  CHECK(by_layer[3].count("attention") == 1);
  CHECK(by_layer[3].count("gdn.state_pass") == 0);
}

TEST_CASE("a DeepSeek-V4 trace names each layer's attention by its compress ratio", "[tools][trace][v4]") {
  // compress_ratios: layers 0 and 1 window only, 2 CSA (ratio 4, the indexer), 3 HCA (ratio 128).
  const auto sc = scenarios::load_scenario_string(
      "name: t\nmodel: {base: deepseek-v4-flash, layers: 4, mtp_layers: 0, compressed_attention: {ratios: [0, 0, 4, "
      "128]}}\n"
      "hardware: gb200\ncluster: {gpus: 8}\nparallelism: {ep: 8}\n"
      "training: {seq_len: 4096, global_batch: 8, micro_batch: 1, precision: mxfp8}\n",
      "t.yaml");
  auto by_layer = kernels_by_layer(trace_events(sc));
  for (int l = 0; l < 4; ++l) {
    INFO("layer " << l);
    CHECK(by_layer[l].count("v4.attention") == 1);
    CHECK(by_layer[l].count("mhc.attn.pre") == 1);
    CHECK(by_layer[l].count("attention") == 0);  // no dense core
    CHECK(by_layer[l].count("v4.compressor") == (l >= 2 ? 1u : 0u));
    CHECK(by_layer[l].count("v4.indexer.scores") == (l == 2 ? 1u : 0u));
  }
}
}}  // namespace CLUSTERSIM_TEST_ID
