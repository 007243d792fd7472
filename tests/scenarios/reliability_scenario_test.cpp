#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/flops.hpp"
#include "models/reliability.hpp"
#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

const std::string k7b = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/7b_256xh100.yaml";

scenarios::Report run_7b(const std::vector<std::string>& sets = {}) {
  return scenarios::simulate(scenarios::load_scenario_file(k7b, sets));
}

std::string load_error(const std::string& yaml) {
  try {
    scenarios::load_scenario_string(yaml, "t.yaml");
  } catch (const scenarios::ScenarioError& e) {
    return e.what();
  }
  return "";
}

const char* kSmall = R"(
model: llama2-7b
hardware: h100-sxm
cluster: {gpus: 8}
training: {seq_len: 4096, global_batch: 8}
)";

}  // namespace

// Llama 3 405B on 16,384 H100 (hardware.md §4.1). The failure rates are defined from its 419
// unexpected + 47 planned interruptions, so counting them back would be circular; the figure
// tested is the independent one the paper states beside them: "more than 90% effective
// training time" (also [klock-jobrel]: 90 % uptime). The step comes from the published
// 400 TFLOP/s per GPU and 16M-token batches.
TEST_CASE("Llama 3 405B on 16384 GPUs: interruptions in 54 days and goodput", "[scenarios][reliability]") {
  const auto sc = scenarios::load_scenario_string(R"(
model: llama3-405b
hardware: h100-sxm
cluster: {gpus: 16384}
training: {seq_len: 8192, global_batch: 16384}
)");
  const auto params = models::count_params(sc.model, sc.training.seq_len);
  const double tokens_per_step = 2048.0 * 8192;
  models::RunInputs in;
  in.step_time_s = tokens_per_step * models::flops_per_token(sc.model, sc.training).model / (16384 * 400e12);
  in.compute_time_s = in.step_time_s;
  in.steps = 15.6e12 / tokens_per_step;
  in.num_gpus = 16384;
  in.checkpoint_bytes = models::checkpoint_bytes(params, sc.training.precision);
  in.host_copy_bps = sc.network.topology.pcie_bandwidth.si() * sc.network.topology.pcie_efficiency;
  const models::RunEstimate e = models::estimate_run(in, sc.reliability);
  const double per_54_days = 54 * 86400 / e.expected_s;
  INFO("step " << in.step_time_s << " s, checkpoint " << in.checkpoint_bytes << " B, interval "
               << e.checkpoint_interval_s << " s, goodput " << e.goodput << ", per 54 days: "
               << e.expected_failures * per_54_days << " failures, " << e.expected_planned * per_54_days << " planned");
  CHECK(e.goodput > 0.90);
  CHECK(e.goodput < 0.99);  // with a failure every ~3 h, checkpoints and restarts cost > 1 %
}

TEST_CASE("7B on 256 GPUs: failures and checkpoints cost a little", "[scenarios][reliability]") {
  const auto r = run_7b();
  REQUIRE(r.scenario.reliability.enabled);
  CHECK(r.days_to_train_ideal == r.scenario.training.tokens / r.tokens_per_s / 86400.0);
  CHECK(r.days_to_train > r.days_to_train_ideal);
  CHECK(r.days_to_train < 1.02 * r.days_to_train_ideal);
  CHECK(r.run.expected_interruptions > 0);
  CHECK(r.run.lost.checkpoint_s > 0);
  CHECK(r.run.checkpoint_interval_s > 0);
}

TEST_CASE("reliability.enabled: false gives days_to_train = tokens / tokens/s exactly", "[scenarios][reliability]") {
  const auto r = run_7b({"reliability.enabled=false", "reliability.straggler_probability=0.01",
                         "reliability.straggler_slowdown=2"});
  CHECK(r.days_to_train == r.scenario.training.tokens / r.tokens_per_s / 86400.0);
  CHECK(r.days_to_train == r.days_to_train_ideal);
  CHECK(r.run.expected_interruptions == 0);
}

TEST_CASE("padding lowers throughput and MFU but not the step or HFU", "[scenarios][reliability]") {
  const auto packed = run_7b();
  const auto padded = run_7b({"data.packing=none", "data.mean_seq_len=1024"});
  CHECK(padded.useful_token_fraction == Approx(0.25));
  CHECK(padded.step_time_s == packed.step_time_s);
  CHECK(padded.tokens_per_s == Approx(0.25 * packed.tokens_per_s));
  CHECK(padded.mfu == Approx(0.25 * packed.mfu));
  CHECK(padded.hfu == Approx(packed.hfu));
  CHECK(padded.days_to_train_ideal == Approx(4 * packed.days_to_train_ideal));
  CHECK(padded.run.lost.padding_s == Approx(0.75 * padded.run.ideal_s));
  CHECK(padded.run.goodput < 0.25);
  const auto bucketed = run_7b({"data.packing=bucketed", "data.seq_len_histogram=[[700, 1], [3000, 1]]"});
  CHECK(bucketed.useful_token_fraction == Approx(3700.0 / (1024 + 4096)));
}

TEST_CASE("more GPUs give more interruptions while stragglers and warm-up add time", "[scenarios][reliability]") {
  const auto base = run_7b();
  const auto twice = run_7b({"cluster.gpus=512", "parallelism.dp=512", "training.global_batch=2048"});
  CHECK(twice.run.job_mtbf_s == Approx(base.run.job_mtbf_s / 2));
  CHECK(twice.run.expected_interruptions / twice.days_to_train >
        1.9 * base.run.expected_interruptions / base.days_to_train);
  const auto slow = run_7b({"reliability.straggler_probability=1e-4", "reliability.straggler_slowdown=1.5",
                            "reliability.warmup_steps=200", "reliability.warmup_slowdown=2"});
  CHECK(slow.run.lost.stragglers_s > 0);
  CHECK(slow.run.lost.warmup_s > 0);
  CHECK(slow.days_to_train > base.days_to_train);
}

TEST_CASE("reliability and data sections reject bad input", "[scenarios][reliability]") {
  const std::string base = kSmall;
  CHECK_THAT(load_error(base + "reliability: {checkpoint_intervall: 10min}\n"),
             Catch::Contains("reliability.checkpoint_intervall") && Catch::Contains("did you mean 'checkpoint_interval'"));
  CHECK_THAT(load_error(base + "reliability: {checkpoint_mode: lazy}\n"),
             Catch::Contains("reliability.checkpoint_mode") && Catch::Contains("allowed: sync, async"));
  CHECK_THAT(load_error(base + "reliability: {gpu_mtbf: 50000h, failures_per_gpu_hour: {gpu: 1e-5}}\n"),
             Catch::Contains("not both"));
  CHECK_THAT(load_error(base + "reliability: {failures_per_gpu_hour: {gpus: 1e-5}}\n"),
             Catch::Contains("reliability.failures_per_gpu_hour.gpus"));
  CHECK_THAT(load_error(base + "data: {packing: bucketed, mean_seq_len: 1000}\n"),
             Catch::Contains("data.packing") && Catch::Contains("seq_len_histogram"));
  CHECK_THAT(load_error(base + "data: {packing: none, mean_seq_len: 5000}\n"),
             Catch::Contains("data.mean_seq_len"));
  CHECK_THAT(load_error(base + "data: {packing: none, seq_len_histogram: [[100, 1, 2]]}\n"),
             Catch::Contains("[length, weight] pairs"));
  CHECK(load_error(base + "reliability: {checkpoint_interval: auto, checkpoint_mode: async, gpu_mtbf: 5e4h}\n") == "");
}

TEST_CASE("checkpoint interval in minutes or steps is honoured", "[scenarios][reliability]") {
  const auto minutes = run_7b({"reliability.checkpoint_interval=30min"});
  CHECK(minutes.run.checkpoint_interval_s == Approx(1800).margin(minutes.step_time_s));
  const auto steps = run_7b({"reliability.checkpoint_interval_steps=100"});
  CHECK(steps.run.checkpoint_interval_steps == 100);
  CHECK(steps.run.checkpoint_interval_s == Approx(100 * steps.step_time_s));
}

}}  // namespace CLUSTERSIM_TEST_ID
