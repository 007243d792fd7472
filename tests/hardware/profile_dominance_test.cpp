// Issue 31 item 3: a strictly better part never predicts slower at the same layout. For every pair
// of hardware profiles where one is at least as good as the other in every figure the simulator
// reads (peaks, HBM, anchors, in-step and fitted factors, latencies, host cost) and reads the same
// attention data, the better one's step is no longer, on dense, pipelined and MoE layouts run on
// the same network. H200 over H100 (same die, more and faster HBM) must be among the pairs.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/presets.hpp"
#include "scenarios/simulate.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

hardware::GpuSpec profile(const std::string& name) {
  return scenarios::load_scenario_string("name: x\nmodel: llama2-7b\nhardware: " + name +
                                             "\ncluster: {gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n",
                                         "<test>")
      .gpu;
}

bool at_least(const hardware::GpuSpec& a, const hardware::GpuSpec& b) {
  for (std::size_t i = 0; i < a.peak_flops.size(); ++i)
    if (a.peak_flops[i].si() < b.peak_flops[i].si()) return false;
  for (auto [x, y] : {std::pair{a.gemm_anchor, b.gemm_anchor}, {a.gemm_anchor_fp8, b.gemm_anchor_fp8},
                      {a.gemm_anchor_nvfp4, b.gemm_anchor_nvfp4}})
    if (x.rate.si() < y.rate.si()) return false;
  return a.sms >= b.sms && a.hbm_capacity.si() >= b.hbm_capacity.si() && a.hbm_bandwidth.si() >= b.hbm_bandwidth.si() &&
         a.l2_capacity.si() >= b.l2_capacity.si() && a.hbm_efficiency >= b.hbm_efficiency &&
         a.in_step_rate_ratio >= b.in_step_rate_ratio && a.compute_sustained_fraction >= b.compute_sustained_fraction &&
         a.sustained_clock_ratio >= b.sustained_clock_ratio && a.gemm_shape_fraction >= b.gemm_shape_fraction &&
         a.memory_latency.si() <= b.memory_latency.si() && a.kernel_gap.si() <= b.kernel_gap.si() &&
         a.host_launch.si() <= b.host_launch.si() && a.comm_sms <= b.comm_sms &&
         a.runtime_reserved.si() <= b.runtime_reserved.si() && a.attention_data == b.attention_data &&
         a.default_attention == b.default_attention && a.gemm_tile_m == b.gemm_tile_m && a.gemm_tile_n == b.gemm_tile_n &&
         a.gemm_k_overhead <= b.gemm_k_overhead;
}

double step_s(const std::string& hardware, const std::string& topology, const std::string& layout) {
  const std::string yaml = "name: x\nhardware: " + hardware + "\nnetwork: {topology: " + topology + "}\n" + layout;
  return scenarios::simulate(scenarios::load_scenario_string(yaml, "<test>")).step_time_s;
}

const char* kLayouts[] = {
    "model: llama2-7b\ncluster: {gpus: 8}\ntraining: {seq_len: 4096, global_batch: 64, micro_batch: 2}\n",
    "model: llama3-70b\ncluster: {gpus: 32}\nparallelism: {tp: 8, pp: 2, vpp: 2, schedule: interleaved}\n"
    "training: {seq_len: 4096, global_batch: 64, micro_batch: 1, recompute: selective}\n",
    "model: qwen3-30b-a3b\ncluster: {gpus: 8}\nparallelism: {ep: 8}\n"
    "training: {seq_len: 4096, global_batch: 64, micro_batch: 1, moe_load_imbalance: 1.0}\n",
};

}  // namespace

TEST_CASE("a profile at least as good as another in every figure never predicts a slower step", "[hardware][monotone]") {
  std::vector<std::pair<std::string, hardware::GpuSpec>> all;
  for (const auto& [name, text] : scenarios::hardware_preset_texts()) {
    try {
      all.emplace_back(name, profile(name));
    } catch (const scenarios::ScenarioError&) {
      // a profile that cannot train in BF16 (V100): no layout here runs on it
    }
  }
  bool h200_over_h100 = false;
  for (const auto& [better, a] : all)
    for (const auto& [worse, b] : all) {
      if (better == worse || !at_least(a, b)) continue;
      h200_over_h100 |= better == "h200-sxm" && worse == "h100-sxm";
      for (const char* layout : kLayouts) {
        const std::string topology = b.node.default_topology;
        const double tb = step_s(better, topology, layout), tw = step_s(worse, topology, layout);
        INFO(better << " over " << worse << " on " << topology << ": " << tb << " s vs " << tw << " s\n" << layout);
        CHECK(tb <= tw * (1 + 1e-9));
      }
    }
  CHECK(h200_over_h100);
}

}}  // namespace CLUSTERSIM_TEST_ID
