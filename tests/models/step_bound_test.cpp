// The step lower bounds of models/step_bound.hpp (through the plan search's wrappers,
// studies/plan_bound.hpp): on samples of auto-parallel plans of MoE, MTP and hybrid models and of
// the benchmark's 70B sweep, the pass bound never exceeds the simulated step, and on MoE models
// it is tighter than the kernel-only floor the plan search fell back to.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/memory.hpp"
#include "models/step_bound.hpp"
#include "scenarios/error.hpp"
#include "scenarios/scenario_template.hpp"
#include "scenarios/simulate.hpp"
#include "studies/plan_bound.hpp"
#include "studies/sweep_engine.hpp"
#include "studies/sweep_space.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

struct Tally {
  int simulated = 0, tighter = 0;
};

// Every `stride`-th auto-parallel plan of `yaml` on `gpus` that loads and fits: the bounds
// against the simulated step.
Tally check_plans(const std::string& yaml, int gpus, std::size_t stride, std::size_t first = 0) {
  const scenarios::ScenarioTemplate base(yaml, "bound.yaml");
  studies::PlanGrid grid;
  studies::set_model_grid(base, {}, &grid);
  const auto plans = studies::auto_parallel_plans(gpus, grid);
  Tally n;
  for (std::size_t i = first; i < plans.size(); i += stride) {
    scenarios::Scenario sc;
    try {
      sc = base.instantiate(plans[i].overrides);
    } catch (const scenarios::ScenarioError&) {
      continue;
    }
    if (!models::estimate_memory(sc.model, sc.training, sc.parallel, sc.gpu).fits()) continue;
    std::string label;
    for (const auto& kv : plans[i].overrides.assignments()) label += kv + " ";
    INFO(label);
    const double pass = studies::plan_step_network_bound_s(sc), kernels = studies::plan_step_lower_bound_s(sc);
    const double floor = studies::step_time_lower_bound_s(sc), step = scenarios::simulate(sc).step_time_s;
    CHECK(pass <= step);
    CHECK(kernels <= step);
    CHECK(floor <= step);
    ++n.simulated;
    if (pass > 1.05 * floor) ++n.tighter;
  }
  return n;
}

}  // namespace

TEST_CASE("the pass bound of MoE plans is below the simulated step and tighter than the kernel floor",
          "[models][bound]") {
  // Qwen3-30B-A3B cut to 8 layers on 16 H100 (two nodes: EP across them), ep and etp searched.
  const Tally n = check_plans("name: q\nmodel: {base: qwen3-30b-a3b, layers: 8}\nhardware: h100-sxm\n"
                              "cluster: {gpus: 16}\ntraining: {seq_len: 4096, global_batch: 64, tokens: 1e11}\n",
                              16, 7);
  CHECK(n.simulated >= 40);
  // The kernel floor counts the dense block per layer and no dispatch: the pass bound prices
  // the routed experts and their all-to-alls.
  CHECK(n.tighter >= n.simulated / 2);
}

TEST_CASE("the pass bound with MTP modules and dense first layers is below the simulated step", "[models][bound]") {
  // DeepSeek-V3's block kinds (3 dense layers, MoE, MLA) and its MTP module, cut to 8 layers.
  const Tally n = check_plans("name: d\nmodel: {base: deepseek-v3, layers: 8}\nhardware: h100-sxm\n"
                              "cluster: {gpus: 32}\ntraining: {seq_len: 4096, global_batch: 64, tokens: 1e11}\n",
                              32, 37);
  CHECK(n.simulated >= 10);
}

TEST_CASE("the bounds of DeepSeek-V4's compressed attention are below the simulated step", "[models][bound][v4]") {
  // Its dense block (64 heads of 512 over every key) costs far more than its window and
  // compressed keys: the kernel floor, priced on the dense block, must not stand above the step.
  const Tally n = check_plans(
      "name: v\nmodel: {base: deepseek-v4-flash, layers: 8, mtp_layers: 0, compressed_attention: {ratios: [0, 0, 4, "
      "128, 4, 128, 4, 128]}}\nhardware: gb200\n"
      "cluster: {gpus: 32}\ntraining: {seq_len: 4096, global_batch: 64, tokens: 1e11, "
      "precision: mxfp8}\n",
      32, 13);
  CHECK(n.simulated >= 10);
  // At 32K tokens the dense block's core over every key costs about four times the whole V4 step
  // (it was the plan search's floor, and pruned every plan).
  const Tally long_context = check_plans(
      "name: v\nmodel: {base: deepseek-v4-flash, layers: 8, mtp_layers: 0, compressed_attention: {ratios: [0, 0, 4, "
      "128, 4, "
      "128, 4, 128]}}\nhardware: gb200\ncluster: {gpus: 32}\ntraining: {seq_len: 32768, global_batch: 32, tokens: "
      "1e11, "
      "precision: mxfp8, recompute: full}\n",
      32, 5);
  CHECK(long_context.simulated >= 5);
}

TEST_CASE("the pass bound of a hybrid Mamba stack is below the simulated step", "[models][bound]") {
  const Tally n = check_plans("name: h\nmodel: nemotron-h-8b\nhardware: h100-sxm\n"
                              "cluster: {gpus: 16}\ntraining: {seq_len: 4096, global_batch: 64, tokens: 1e11}\n",
                              16, 11);
  CHECK(n.simulated >= 20);
}

TEST_CASE("the bounds stay below the simulated step on a sample of the 70B sweep on 1,024 GPUs", "[models][bound]") {
  // The benchmark's scenario (tools/bench_sweep.cpp), every 61st plan.
  const Tally n = check_plans("name: b\nmodel: llama3-70b\nhardware: h100-sxm\ncluster: {gpus: 1024}\n"
                              "training: {seq_len: 8192, global_batch: 1024, tokens: 15e12}\n",
                              1024, 61, 5);
  CHECK(n.simulated >= 50);
}

}}  // namespace CLUSTERSIM_TEST_ID
