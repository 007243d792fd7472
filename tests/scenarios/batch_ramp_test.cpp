// training.batch_ramp: days-to-train integrates the step time over a growing batch; bad values
// are errors naming the key.
#include <catch2/catch.hpp>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

std::string scenario(const std::string& ramp) {
  return "name: t\nmodel: llama2-7b\nhardware: h100-sxm\ncluster: {gpus: 64}\nparallelism: {tp: 1, pp: 1, zero_stage: 1}\n"
         "training: {seq_len: 4096, global_batch: 512, micro_batch: 1, tokens: 1.0e11" + ramp + "}\n";
}

std::string load_error(const std::string& ramp) {
  try {
    scenarios::load_scenario_string(scenario(ramp), "r.yaml");
  } catch (const scenarios::ScenarioError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a batch ramp lengthens days-to-train by the slower small-batch steps it runs", "[scenarios][ramp]") {
  const auto flat = scenarios::simulate(scenarios::load_scenario_string(scenario(""), "r.yaml"));
  const auto ramp = scenarios::simulate(
      scenarios::load_scenario_string(scenario(", batch_ramp: {from: 64, to: 512, tokens: 5.0e10}"), "r.yaml"));
  const auto small = scenarios::simulate(scenarios::load_scenario_string(
      "name: t\nmodel: llama2-7b\nhardware: h100-sxm\ncluster: {gpus: 64}\nparallelism: {tp: 1, pp: 1, zero_stage: 1}\n"
      "training: {seq_len: 4096, global_batch: 64, micro_batch: 1, tokens: 1.0e11}\n", "r.yaml"));
  // One micro-batch per step at batch 64 leaves the gradient all-reduce nothing to hide behind:
  // smaller batches run fewer tokens per second, so the ramp costs time, but less than running
  // its whole half of the tokens at the smallest batch.
  REQUIRE(small.tokens_per_s < flat.tokens_per_s);
  CHECK(ramp.days_to_train_ideal > flat.days_to_train_ideal);
  const double worst = (0.5 / small.tokens_per_s + 0.5 / flat.tokens_per_s) * 1.0e11 / 86400.0;
  CHECK(ramp.days_to_train_ideal < worst);
  CHECK(ramp.step_time_s == Approx(flat.step_time_s));  // the reported step is the full batch's
}

TEST_CASE("training.batch_ramp: inconsistent values are errors naming the key", "[scenarios][ramp]") {
  CHECK(load_error(", batch_ramp: {from: 64, to: 256, tokens: 5.0e10}").find("training.batch_ramp.to") != std::string::npos);
  CHECK(load_error(", batch_ramp: {from: 512, tokens: 5.0e10}").find("training.batch_ramp.from") != std::string::npos);
  CHECK(load_error(", batch_ramp: {from: 100, tokens: 5.0e10}").find("multiple of micro_batch") != std::string::npos);
  CHECK(load_error(", batch_ramp: {from: 64, tokens: 5.0e11}").find("training.batch_ramp.tokens") != std::string::npos);
  CHECK(load_error(", batch_ramp: {from: 64}").find("training.batch_ramp.tokens") != std::string::npos);
  CHECK(load_error(", batch_ramp: {from: 64, tokens: 5.0e10, step: 2}").find("training.batch_ramp") != std::string::npos);
  CHECK(load_error(", batch_ramp: {from: 64, to: 512, tokens: 5.0e10}").empty());
}

}}  // namespace CLUSTERSIM_TEST_ID
