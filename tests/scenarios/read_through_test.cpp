// A template reads a sweep's or a plan's patch through its shared tree (scenarios/load.cpp
// load_scenario_shared) instead of applying it to a copy: the scenario, the report and every
// refusal must be those of the patch applied, and the shared tree must not change.
#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "reporters/report.hpp"
#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/scenario_patch.hpp"
#include "scenarios/scenario_template.hpp"
#include "scenarios/simulate.hpp"

namespace {
namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using namespace clustersim::scenarios;

namespace {

std::string scenario_text(const std::string& name) {
  std::ifstream in(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The report's JSON, or the refusal's message.
std::string outcome(const std::function<Scenario()>& load) {
  try {
    return reporters::format_json(simulate(load()));
  } catch (const ScenarioError& e) {
    return std::string("error: ") + e.what();
  }
}

// Read through (the template) and applied (load_scenario_string applies every patch to its tree).
void check_same(const ScenarioTemplate& base, const std::string& text, const ScenarioPatch& patch) {
  const std::string through = outcome([&] { return base.instantiate(patch); });
  const std::string applied = outcome([&] { return load_scenario_string(text, base.source(), patch); });
  INFO(patch.yaml());
  CHECK(through == applied);
}

ScenarioPatch plan_patch(int tp, int pp, int micro_batch, const char* recompute) {
  ScenarioPatch p = ScenarioPatch::from("plan");
  p.set("parallelism.tp", tp).set("parallelism.pp", pp).set("training.micro_batch", micro_batch);
  p.set("training.recompute", recompute).set("parallelism.zero_stage", 1);
  return p;
}

}  // namespace

TEST_CASE("a patch read through gives what the patch applied gives", "[scenarios][patch]") {
  for (const char* file : {"7b_256xh100.yaml", "deepseek_v3_1024xh100.yaml"}) {
    const std::string text = scenario_text(file);
    const ScenarioTemplate base(text, file);
    const std::string before = outcome([&] { return base.instantiate(); });
    check_same(base, text, plan_patch(2, 2, 1, "selective"));
    check_same(base, text, plan_patch(4, 1, 2, "full"));
    // Top-level keys: another hardware preset, and a section the file does not have.
    ScenarioPatch hw = ScenarioPatch::from("--fix");
    hw.set("hardware", "h200-sxm").set("reliability.gpu_mtbf", "50000 h");
    check_same(base, text, hw);
    // A list, a key removed (null), a value the loader refuses, an unknown key, a key under a
    // scalar, and a path two levels down (applied to a copy instead).
    ScenarioPatch set = ScenarioPatch::from("--set");
    set.set("parallelism.pp", 2)
        .set("parallelism.pp_layers", PatchList{14LL, 18LL})
        .set("training.tokens", PatchNull{});
    check_same(base, text, set);
    for (const auto& [path, value] :
         std::vector<std::pair<std::string, PatchValue>>{{"training.micro_batch", PatchValue(0LL)},
                                                         {"training.micro_bach", PatchValue(2LL)},
                                                         {"name.first", PatchValue(std::string("x"))},
                                                         {"model.layers", PatchValue(40LL)},
                                                         {"parallelism", PatchValue(8LL)}}) {
      ScenarioPatch one = ScenarioPatch::from("--vary");
      one.set(path, value);
      check_same(base, text, one);
    }
    // The shared tree is as it was: the file's own scenario reads the same.
    CHECK(outcome([&] { return base.instantiate(); }) == before);
  }
}

}  // namespace CLUSTERSIM_TEST_ID
}  // namespace
