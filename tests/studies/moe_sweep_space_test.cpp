// --auto-parallel for MoE models: expert parallelism (ep, etp) joins the plan grid, bounded and
// consistent with the fold tp·cp·dp = etp·ep·edp of every pipeline stage.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "scenarios/error.hpp"
#include "scenarios/scenario_template.hpp"
#include "studies/auto_grid.hpp"
#include "studies/sweep_space.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::studies;
using clustersim::scenarios::ScenarioError;
using clustersim::scenarios::ScenarioTemplate;

namespace {
PlanGrid small_grid() {
  PlanGrid g;
  g.tp = {1, 2};
  g.pp = {1, 2};
  g.cp = {1};
  g.vpp = {1};
  g.micro_batch = {1};
  g.zero_stage = {1};
  g.recompute = {"none"};
  return g;
}
int value(const Plan& p, std::size_t column) { return std::stoi(p.values.at(column)); }
}  // namespace

TEST_CASE("auto-parallel searches ep and etp for an MoE grid, within the fold", "[sweep][moe]") {
  PlanGrid g = small_grid();
  g.experts = 8;
  g.expert_ffn_hidden = 2048;
  const auto plans = auto_parallel_plans(8, g);
  const std::size_t ep_col = plan_keys(true).size() - 2, etp_col = plan_keys(true).size() - 1;
  REQUIRE(plan_keys(true)[ep_col] == "parallelism.ep");
  std::set<std::pair<int, int>> seen_tp1_pp1;
  for (const auto& p : plans) {
    REQUIRE(p.values.size() == plan_keys(true).size());
    const int tp = value(p, 0), pp = value(p, 1), ep = value(p, ep_col), etp = value(p, etp_col);
    const int fold = 8 / pp;  // tp·cp·dp of one stage
    CHECK(fold % (ep * etp) == 0);
    CHECK(8 % ep == 0);               // ep divides the routed experts
    CHECK((etp == 1 || etp == tp));   // the common etp = 1 and Megatron's default etp = tp
    CHECK(std::ranges::count(p.overrides.assignments(), "parallelism.ep=" + std::to_string(ep)) == 1);
    if (tp == 1 && pp == 1) seen_tp1_pp1.insert({ep, etp});
  }
  // tp1 pp1 on 8 GPUs: ep ∈ {1, 2, 4, 8}, etp = 1 only.
  CHECK(seen_tp1_pp1 == std::set<std::pair<int, int>>{{1, 1}, {2, 1}, {4, 1}, {8, 1}});
  // tp2 pp2 on 8 GPUs: fold 4, so etp·ep ≤ 4: (1,1) (2,1) (4,1) (1,2) (2,2), each under the
  // two vpp-1 schedules (1f1b, zb-h1).
  const auto tp2pp2 = std::count_if(plans.begin(), plans.end(), [](const Plan& p) {
    return p.values[0] == "2" && p.values[1] == "2";
  });
  CHECK(tp2pp2 == 5 * 2);
  // Dense grid: no expert columns, no expert overrides.
  for (const auto& p : auto_parallel_plans(8, small_grid())) {
    CHECK(p.values.size() == plan_keys().size());
    CHECK(std::ranges::none_of(p.overrides.assignments(), [](const std::string& o) {
      return o.rfind("parallelism.ep", 0) == 0;
    }));
  }
}

TEST_CASE("the MoE grid is bounded: about 2·log2(experts) expert layouts per dense plan", "[sweep][moe]") {
  PlanGrid dense;
  PlanGrid moe;
  moe.experts = 256;
  moe.expert_ffn_hidden = 2048;
  const auto d = auto_parallel_plans(1024, dense).size(), m = auto_parallel_plans(1024, moe).size();
  INFO("dense plans " << d << ", MoE plans " << m);
  CHECK(m > d);
  CHECK(m <= 18 * d);  // ep ∈ {1, 2, ..., 256} (9 values) × etp ∈ {1, tp}
}

TEST_CASE("a sweep of an MoE preset searches ep and --set fixes it while a dense model keeps ep as an override", "[sweep][moe]") {
  const ScenarioTemplate moe_base("name: s\nmodel: qwen3-30b-a3b\nhardware: h100-sxm\ncluster:\n  gpus: 16\n"
                                  "training:\n  seq_len: 4096\n  global_batch: 512\n", "s");
  PlanGrid g = small_grid();
  set_model_grid(moe_base, {}, &g);
  CHECK(g.experts == 128);
  CHECK(g.expert_ffn_hidden == 768);
  const SweepSpace space({}, true, {}, 16, g);
  CHECK(space.columns().back() == "parallelism.etp");
  std::set<std::string> eps;
  for (std::uint64_t i = 0; i < space.size(); ++i) eps.insert(space.at(i).values[space.columns().size() - 2]);
  CHECK(eps == std::set<std::string>{"1", "16", "2", "4", "8"});
  // Every plan of the sweep loads: ep divides the experts and the fold.
  for (std::uint64_t i = 0; i < space.size(); ++i) CHECK_NOTHROW(moe_base.instantiate(space.at(i).overrides));
  const SweepSpace fixed({}, true, {"parallelism.ep=8"}, 16, g);
  for (std::uint64_t i = 0; i < fixed.size(); ++i) CHECK(fixed.at(i).values[fixed.columns().size() - 2] == "8");

  const ScenarioTemplate dense_base("name: s\nmodel: llama3-8b\nhardware: h100-sxm\ncluster:\n  gpus: 16\n"
                                    "training:\n  seq_len: 4096\n  global_batch: 512\n", "s");
  PlanGrid d = small_grid();
  set_model_grid(dense_base, {}, &d);
  CHECK(d.experts == 0);
  const SweepSpace dense({}, true, {"parallelism.ep=8"}, 16, d);
  CHECK(dense.columns().size() == plan_keys().size());
  CHECK_THROWS_AS(dense_base.instantiate(dense.at(0).overrides), ScenarioError);  // the loader names the key
}

TEST_CASE("the auto-parallel grid leaves out the plans the loader refuses for the model, unless a dimension is fixed",
          "[sweep][moe]") {
  // DeepSeek-V3 (MLA, 61 layers) and Qwen3-235B (4 kv heads): cp > 1, pp·vpp above the layers and
  // tp 8 were listed and rejected row by row (scenarios/plan_rules.hpp).
  const std::string tail = "hardware: h100-sxm\ncluster:\n  gpus: 1024\ntraining:\n  seq_len: 4096\n  global_batch: 8192\n";
  for (const std::string model : {"deepseek-v3", "qwen3-235b-a22b"}) {
    INFO(model);
    const ScenarioTemplate base("name: g\nmodel: " + model + "\n" + tail, "g");
    PlanGrid g;
    g.micro_batch = {1};
    g.zero_stage = {1};
    g.recompute = {"full"};
    set_model_grid(base, {}, &g);
    REQUIRE(g.model);
    const SweepSpace space({}, true, {}, 1024, g);
    REQUIRE(space.size() > 0);
    std::set<std::string> tps, cps;
    for (std::uint64_t i = 0; i < space.size(); ++i) {
      const Config c = space.at(i);
      tps.insert(c.values[0]), cps.insert(c.values[2]);
      try {
        (void)base.instantiate(c.overrides);
      } catch (const ScenarioError& e) {  // only the batch may still refuse a plan, not the model
        const std::string why = e.what();
        INFO(why);
        CHECK(why.find("parallelism.") == std::string::npos);
      }
    }
    if (model == "deepseek-v3") CHECK(cps == std::set<std::string>{"1"});
    if (model == "qwen3-235b-a22b") CHECK(tps == std::set<std::string>{"1", "2", "4"});
    // A value the user fixes stays, and its rows keep the loader's reason.
    const SweepSpace fixed({}, true, {model == "deepseek-v3" ? "parallelism.cp=2" : "parallelism.tp=8"}, 1024, g);
    REQUIRE(fixed.size() > 0);
    CHECK_THROWS_AS(base.instantiate(fixed.at(0).overrides), ScenarioError);
  }
  // An axis that varies the model: the base's model is not every row's, so nothing is left out.
  const ScenarioTemplate base("name: g\nmodel: deepseek-v3\n" + tail, "g");
  const SweepSpace varied = sweep_space_for(base, {Axis{"model", {"deepseek-v3", "llama3-8b"}}}, true, {});
  bool cp2 = false;
  for (std::uint64_t i = 0; i < varied.size() && !cp2; ++i) cp2 = varied.at(i).values[3] == "2";  // model, tp, pp, cp
  CHECK(cp2);
}

}}  // namespace CLUSTERSIM_TEST_ID
