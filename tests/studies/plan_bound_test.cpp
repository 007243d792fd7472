// The plan search's step-time bound (studies/plan_bound.hpp) and the skipping it drives: the
// bound stays below the simulated step on pipelines of every schedule, and the search with
// skipping returns the same tables as the search that simulates every plan that fits.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/memory.hpp"
#include "models/pipeline.hpp"
#include "scenarios/error.hpp"
#include "scenarios/scenario_template.hpp"
#include "scenarios/simulate.hpp"
#include "studies/bound_share.hpp"
#include "studies/plan_bound.hpp"
#include "studies/plan_costs.hpp"
#include "studies/plan_search.hpp"
#include "studies/sweep_engine.hpp"
#include "studies/sweep_space.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using namespace clustersim::studies;

namespace {

const char* kBase = R"(name: bound
model: llama2-7b
hardware: h100-sxm
cluster: {gpus: 16}
parallelism: {zero_stage: 1}
training: {seq_len: 2048, global_batch: 64, recompute: full, tokens: 1e11}
)";

}  // namespace

TEST_CASE("the plan search's pipeline bound is below the simulated step and above the kernel-only bound",
          "[studies][plan]") {
  const scenarios::ScenarioTemplate base(kBase, "bound.yaml");
  const std::vector<std::vector<std::string>> cases{
      {},
      {"parallelism.pp=2"},
      {"parallelism.pp=4", "parallelism.vpp=2", "parallelism.schedule=interleaved"},
      {"parallelism.pp=8", "parallelism.schedule=gpipe"},
      {"parallelism.pp=8", "training.recompute=none", "parallelism.zero_stage=0"},
      {"parallelism.pp=4", "parallelism.zero_stage=3", "training.recompute=selective"},
      {"parallelism.pp=2", "parallelism.zero_stage=2", "training.micro_batch=2"},
      {"parallelism.tp=2", "parallelism.pp=2", "parallelism.cp=2", "parallelism.sequence_parallel=true"},
      {"parallelism.tp=8", "parallelism.pp=2", "training.recompute=none"},
      // pp·vpp does not divide the 32 layers: the loader's automatic uneven split
      {"cluster.gpus=24", "parallelism.pp=3", "training.global_batch=48"},
      {"parallelism.pp=4", "parallelism.vpp=3", "parallelism.schedule=interleaved", "training.recompute=none"},
      {"parallelism.pp=16", "training.global_batch=32", "training.recompute=none"},
      // zb-h1: B and W apart, the W passes filling the drain
      {"parallelism.pp=8", "parallelism.schedule=zb-h1", "training.recompute=none", "parallelism.zero_stage=0"},
      {"parallelism.pp=4", "parallelism.schedule=zb-h1", "training.global_batch=16"},
      {"parallelism.pp=16", "parallelism.schedule=zb-h1", "training.global_batch=32", "training.recompute=none"},
      {"parallelism.tp=2", "parallelism.pp=4", "parallelism.schedule=zb-h1", "parallelism.sequence_parallel=true",
       "parallelism.zero_stage=2"},
  };
  int tighter = 0, tighter_network = 0;
  for (const auto& o : cases) {
    std::string label;
    for (const auto& kv : o) label += kv + " ";
    INFO(label);
    const auto sc = base.instantiate(o);
    const double bound = plan_step_lower_bound_s(sc), kernels_only = step_time_lower_bound_s(sc);
    const double network = plan_step_network_bound_s(sc);
    const double step = scenarios::simulate(sc).step_time_s;
    CHECK(bound <= step);
    CHECK(bound >= kernels_only);
    CHECK(network <= step);
    // At least the kernel bound, up to the engine's rounding of each pass to whole picoseconds
    // (zb-h1 profiles its B and W passes apart: ~40 ps off over a step of ~1000 passes).
    CHECK(network >= bound - 1e-9);
    if (bound > 1.1 * kernels_only) ++tighter;
    if (network > 1.02 * bound) ++tighter_network;
  }
  // The pipeline's drain, head and optimizer are what the kernel-only bound leaves out; the TP
  // collectives and CP ring steps what the pipeline bound leaves out (the TP and CP cases).
  CHECK(tighter >= 4);
  CHECK(tighter_network >= 2);
}

TEST_CASE("the W passes after each stage's last B are those of the zb-h1 stage order", "[studies][plan]") {
  // Counted on models::stage_schedule's own order, which the simulation runs.
  for (int pp : {2, 3, 4, 8})
    for (int m : {1, 2, 3, 4, 5, 8, 9, 17, 40})
      for (int s = 0; s < pp; ++s) {
        models::ParallelSpec p;
        p.pp = pp;
        p.schedule = models::PipelineSchedule::zb_h1;
        const auto ops = models::stage_schedule(p, s, m);
        int after = 0;
        for (auto it = ops.rbegin(); it != ops.rend() && it->kind != models::PassKind::backward; ++it) ++after;
        INFO("pp " << pp << " stage " << s << " micro-batches " << m);
        CHECK(models::weight_passes_after_last_backward(pp, s, m) == after);
      }
}

TEST_CASE("the network pass bound is below the simulated step on every plan of a grid that fits",
          "[studies][plan]") {
  // Every tp·pp·cp·vpp·micro-batch·ZeRO·recompute plan of a 32-layer model on 16 H100 (two
  // nodes: TP inside a node, CP and DP across them) that loads and fits.
  const scenarios::ScenarioTemplate base(
      "name: grid\nmodel: llama2-7b\nhardware: h100-sxm\ncluster: {gpus: 16}\n"
      "training: {seq_len: 4096, global_batch: 32, tokens: 1e11}\n", "grid.yaml");
  PlanGrid grid;
  grid.pp = {1, 2, 4, 8};
  grid.layers = 32;
  grid.max_vpp = 4;
  grid.micro_batch = {1, 2};
  int simulated = 0, tighter = 0;
  for (const Plan& plan : auto_parallel_plans(16, grid)) {
    scenarios::Scenario sc;
    try {
      sc = base.instantiate(plan.overrides);
    } catch (const scenarios::ScenarioError&) {
      continue;
    }
    if (!models::estimate_memory(sc.model, sc.training, sc.parallel, sc.gpu).fits()) continue;
    std::string label;
    for (const auto& kv : plan.overrides.assignments()) label += kv + " ";
    INFO(label);
    const double network = plan_step_network_bound_s(sc), kernels = plan_step_lower_bound_s(sc);
    CHECK(network <= scenarios::simulate(sc).step_time_s);
    CHECK(network >= kernels - 1e-9);  // as above
    ++simulated;
    if (network > 1.02 * kernels) ++tighter;
  }
  CHECK(simulated >= 100);
  CHECK(tighter >= simulated / 4);
}

TEST_CASE("skipping plans by the bound returns the tables of the search that simulates every plan",
          "[studies][plan]") {
  PlanRequest r;
  r.model = "gpt3-1.3b";
  r.tokens = 3e11;
  r.days = 30;
  r.hardware = {"h100-sxm", "a100-80gb"};
  r.fixes = {"parallelism.tp=1", "parallelism.cp=1", "parallelism.zero_stage=1"};
  r.prices = parse_gpu_hour_prices("h100-sxm=2.5,a100-80gb=1.5");
  r.max_gpus = 32;
  r.top = 4;
  r.threads = 2;
  const PlanResult skipping = search_plans(r);
  r.exhaustive = true;
  const PlanResult every = search_plans(r);
  REQUIRE(skipping.stats.pruned > 0);
  CHECK(every.stats.pruned == 0);
  CHECK(every.stats.ok > skipping.stats.ok);
  const auto same = [](const std::vector<PlanCandidate>& x, const std::vector<PlanCandidate>& y) {
    REQUIRE(x.size() == y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      CHECK(x[i].hardware == y[i].hardware);
      CHECK(x[i].index == y[i].index);
      CHECK(x[i].cells == y[i].cells);
    }
  };
  REQUIRE(!every.cheapest.empty());
  same(skipping.cheapest, every.cheapest);
  same(skipping.fastest_per_gpu_count, every.fastest_per_gpu_count);
}

TEST_CASE("plans that differ only in a ZeRO stage of 1, 2 or 3 have one screen bound", "[studies][plan]") {
  // The plan search computes the bound once for such twins (studies/bound_share.hpp). It holds
  // while the models read the stage only as "at least 1" inside the bound; a model change that
  // puts ZeRO-2's or ZeRO-3's DP traffic into the bound fails here.
  struct Case {
    const char* model;
    int gpus;
    std::vector<std::string> plan;
  };
  const std::vector<Case> cases{
      {"llama2-7b", 16, {}},
      {"llama2-7b", 16, {"parallelism.pp=4", "parallelism.vpp=2", "parallelism.schedule=interleaved"}},
      {"llama2-7b", 16, {"parallelism.pp=4", "parallelism.schedule=zb-h1", "training.recompute=none"}},
      {"llama2-7b", 16, {"parallelism.pp=2", "parallelism.vpp=2", "parallelism.schedule=dualpipev"}},
      {"llama2-7b", 32, {"parallelism.tp=2", "parallelism.cp=2", "parallelism.pp=2", "training.recompute=selective"}},
      {"qwen3-30b-a3b", 16, {"parallelism.ep=8", "training.recompute=selective"}},
      {"qwen3-30b-a3b", 32, {"parallelism.pp=2", "parallelism.ep=8", "parallelism.tp=2", "parallelism.etp=1"}},
      {"deepseek-v2", 64, {"parallelism.pp=4", "parallelism.ep=16", "training.recompute=full"}},
      {"nemotron3-nano-30b-a3b", 16, {"parallelism.ep=8"}},
  };
  int differs_at_zero0 = 0;
  for (const Case& c : cases) {
    const scenarios::ScenarioTemplate base(std::string("name: twins\nmodel: ") + c.model +
                                               "\nhardware: h100-sxm\ncluster: {gpus: " + std::to_string(c.gpus) +
                                               "}\ntraining: {seq_len: 4096, global_batch: 256, tokens: 1e11}\n",
                                           "twins.yaml");
    std::string label = c.model;
    for (const auto& kv : c.plan) label += " " + kv;
    INFO(label);
    std::vector<double> bounds;
    std::vector<bool> passes;
    for (int zero : {0, 1, 2, 3}) {
      auto plan = c.plan;
      plan.push_back("parallelism.zero_stage=" + std::to_string(zero));
      bool network = false;
      bounds.push_back(plan_step_screen_bound_s(base.instantiate(plan), &network));
      passes.push_back(network);
    }
    CHECK(bounds[0] > 0);
    CHECK(bounds[2] == bounds[1]);
    CHECK(bounds[3] == bounds[1]);
    CHECK(passes[2] == passes[1]);
    CHECK(passes[3] == passes[1]);
    if (bounds[0] != bounds[1]) ++differs_at_zero0;  // the optimizer's shard: ZeRO-0 is no twin
  }
  CHECK(differs_at_zero0 >= 5);
}

TEST_CASE("the bound share's key joins ZeRO-1, -2 and -3 twins and nothing else", "[studies][plan]") {
  auto config = [](std::vector<std::string> sets) {
    Config c;
    c.overrides = scenarios::ScenarioPatch::parse(sets, "plan");
    return c;
  };
  const std::string k1 =
      BoundShare::key(config({"parallelism.tp=2", "parallelism.zero_stage=1", "training.recompute=full"}));
  CHECK(!k1.empty());
  CHECK(BoundShare::key(config({"parallelism.tp=2", "parallelism.zero_stage=2", "training.recompute=full"})) == k1);
  CHECK(BoundShare::key(config({"parallelism.tp=2", "parallelism.zero_stage=3", "training.recompute=full"})) == k1);
  CHECK(BoundShare::key(config({"parallelism.tp=2", "parallelism.zero_stage=1", "training.recompute=none"})) != k1);
  CHECK(BoundShare::key(config({"parallelism.tp=4", "parallelism.zero_stage=1", "training.recompute=full"})) != k1);
  CHECK(BoundShare::key(config({"parallelism.tp=2", "parallelism.zero_stage=0", "training.recompute=full"})).empty());
  CHECK(BoundShare::key(config({"parallelism.tp=2", "training.recompute=full"})).empty());
  BoundShare share;
  CHECK(!share.find(k1));
  share.put(k1, {1.5, true});
  REQUIRE(share.find(k1));
  CHECK(share.find(k1)->bound_s == 1.5);
  CHECK(share.find(k1)->network_bound);
  share.clear();
  CHECK(!share.find(k1));
}
}}  // namespace CLUSTERSIM_TEST_ID
