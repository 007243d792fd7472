// The typed scenario patch (scenarios/scenario_patch.hpp): values keep the spelling a user wrote,
// a patched value fails with the loader's one-line error naming its origin, and a scenario
// written as a patch loads as its YAML rendering does.
#include <catch2/catch.hpp>

#include <string>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/scenario_patch.hpp"
#include "scenarios/scenario_template.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::scenarios;

namespace {

ScenarioPatch small_scenario() {
  ScenarioPatch s;
  s.set("name", "patch: test #1").set("model", "llama2-7b").set("hardware", "h100-sxm");
  s.set("cluster.gpus", 16).set("parallelism.tp", 2).set("parallelism.sequence_parallel", true);
  s.set("training.seq_len", 4096).set("training.global_batch", 32).set("training.tokens", 1.5e12);
  s.set("parallelism.pp_layers", PatchList{16LL, 16LL}).set("parallelism.pp", 2);
  return s;
}

std::string error_of(const ScenarioPatch& scenario, const ScenarioPatch& overrides) {
  try {
    (void)ScenarioTemplate(scenario, "<patch>").instantiate(overrides);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a patch value keeps the spelling the user wrote", "[scenarios][patch]") {
  CHECK(value_of("8") == PatchValue(8LL));
  CHECK(value_of("0.5") == PatchValue(0.5));
  CHECK(value_of("true") == PatchValue(true));
  CHECK(value_of("bf16") == PatchValue(std::string("bf16")));
  // Numbers that do not print back as written stay words, read by the loader as written.
  CHECK(value_of("1e5") == PatchValue(std::string("1e5")));
  CHECK(value_of("08") == PatchValue(std::string("08")));
  CHECK(value_of("1.0") == PatchValue(std::string("1.0")));
  CHECK(value_of("null") == PatchValue(PatchNull{}));
  CHECK(value_of("[layernorm, mla_up_proj]") == PatchValue(PatchYaml{"[layernorm, mla_up_proj]"}));
  CHECK(to_text(PatchValue(PatchList{1LL, 2.5, std::string("x")})) == "[1, 2.5, x]");
  CHECK(ScenarioPatch::parse({"training.micro_batch=2"}).assignments() == std::vector<std::string>{"training.micro_batch=2"});
  CHECK_THROWS_WITH(ScenarioPatch::parse({"training.micro_batch="}, "--fix"), Catch::StartsWith("--fix training.micro_batch=: empty value"));
}

TEST_CASE("a scenario written as a patch loads as its YAML does", "[scenarios][patch]") {
  const ScenarioPatch s = small_scenario();
  const Scenario a = load_scenario(s, "<patch>");
  const Scenario b = load_scenario_string(s.yaml(), "<patch>");
  CHECK(a.name == "patch: test #1");
  CHECK(a.name == b.name);
  CHECK(a.parallel.tp == 2);
  CHECK(b.parallel.sequence_parallel);
  CHECK(a.parallel.pp_layers == b.parallel.pp_layers);
  CHECK(a.training.tokens == 1.5e12);
  CHECK(b.training.tokens == 1.5e12);
  // A template built from the patch, and its copy (one per thread), instantiate alike.
  const ScenarioTemplate base(s, "<patch>");
  const ScenarioTemplate copy(base);
  ScenarioPatch mb = ScenarioPatch::from("--vary");
  mb.set("training.micro_batch", 2);
  CHECK(copy.instantiate(mb).training.micro_batch == 2);
  CHECK(base.instantiate().training.micro_batch == 1);
}

TEST_CASE("a patched value fails with the loader's error, naming its origin", "[scenarios][patch]") {
  const ScenarioPatch s = small_scenario();
  ScenarioPatch vary = ScenarioPatch::from("--vary");
  vary.set("training.micro_batch", 0);
  CHECK(error_of(s, vary) == "--vary training.micro_batch: 0 is out of range; allowed 1..1000000");
  // A check across keys names the key that is not patched by its source, as in a file.
  vary.set("training.micro_batch", 3);
  CHECK_THAT(error_of(s, vary), Catch::StartsWith("<patch>: training.global_batch: global_batch (32) must be a multiple"));
  ScenarioPatch fix = ScenarioPatch::from("--fix");
  fix.set("parallelism.tp", 3);
  CHECK_THAT(error_of(s, fix), Catch::StartsWith("--fix parallelism.tp: "));
  ScenarioPatch plan = ScenarioPatch::from("plan");
  plan.set("training.recompute", "everything");
  CHECK(error_of(s, plan) == "plan training.recompute: 'everything' is not allowed; allowed: none, selective, full");
  // Entries of one patch keep their own origins.
  ScenarioPatch both = ScenarioPatch::from("--set");
  both.set("training.precision", "bf16");
  both.append(plan);
  CHECK_THAT(error_of(s, both), Catch::StartsWith("plan training.recompute"));
  // Keys of the scenario itself cite its source, as a file's keys cite the file.
  ScenarioPatch bad = s;
  bad.set("parallelism.cp", 0);
  CHECK_THROWS_WITH(load_scenario(bad, "published.csv:X-1"),
                    Catch::StartsWith("published.csv:X-1: parallelism.cp: 0 is out of range"));
}

}}  // namespace CLUSTERSIM_TEST_ID
