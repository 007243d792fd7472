#include <catch2/catch.hpp>

#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using testing::run_main_scenario;

TEST_CASE("more micro-batches per step amortize the exposed gradient reduction", "[scenarios]") {
  const auto few = run_main_scenario({"training.global_batch=256"});   // 1 micro-batch
  const auto many = run_main_scenario({"training.global_batch=4096"});  // 16 micro-batches
  const double exposed_few = few.step.breakdown.comm_exposed[models::Channel::dp] / few.step_time_s;
  const double exposed_many = many.step.breakdown.comm_exposed[models::Channel::dp] / many.step_time_s;
  REQUIRE(exposed_many < exposed_few);
  REQUIRE(many.mfu > few.mfu);
}

TEST_CASE("without overlap the whole gradient reduction is exposed", "[scenarios]") {
  const auto overlapped = run_main_scenario();
  const auto serial = run_main_scenario({"training.overlap_grad_reduce=false"});
  REQUIRE(serial.step.breakdown.comm_exposed[models::Channel::dp] > overlapped.step.breakdown.comm_exposed[models::Channel::dp]);
  REQUIRE(serial.step_time_s > overlapped.step_time_s);
}

TEST_CASE("full recompute lowers MFU, keeps HFU ≥ MFU with HFU/MFU ≈ 4/3", "[scenarios]") {
  const auto base = run_main_scenario();
  const auto full = run_main_scenario({"training.recompute=full"});
  REQUIRE(full.mfu < base.mfu);
  REQUIRE(full.hfu >= full.mfu);
  REQUIRE(full.hfu / full.mfu == Approx(4.0 / 3.0).epsilon(0.01));
  REQUIRE(full.step.breakdown.recompute_s > 0);
  REQUIRE(full.memory.activations_bytes < base.memory.activations_bytes / 4);
}

TEST_CASE("the 7B plan without ZeRO does not fit in 80 GB and says so", "[scenarios]") {
  const auto r = run_main_scenario({"parallelism.zero_stage=0"});
  REQUIRE_FALSE(r.memory.fits());
  // 2 (bf16 weights) + 4 (fp32 grads) + 12 (Adam) bytes per parameter alone exceed 80 GiB.
  REQUIRE(r.memory.weights_bytes + r.memory.gradients_bytes + r.memory.optimizer_bytes >
          r.memory.capacity_bytes);
  REQUIRE(run_main_scenario().memory.fits());
}

TEST_CASE("7B with no recompute at micro-batch 16, seq 4096 does not fit in 80 GB", "[scenarios]") {
  const auto r = run_main_scenario({"training.micro_batch=16", "training.global_batch=4096"});
  REQUIRE_FALSE(r.memory.fits());
  REQUIRE(r.memory.activations_bytes > 80e9);
}

TEST_CASE("step time never rises when HBM or network bandwidth rises", "[scenarios]") {
  const auto base = run_main_scenario();
  for (const char* bw : {"4TB/s", "6TB/s", "12TB/s"}) {
    const auto faster = run_main_scenario({std::string("hardware.memory_bandwidth=") + bw});
    REQUIRE(faster.step_time_s <= base.step_time_s);
  }
  double previous = 1e9;
  for (const char* bw : {"100Gb/s", "200Gb/s", "400Gb/s", "800Gb/s"}) {
    const auto r = run_main_scenario({"training.overlap_grad_reduce=false",
                                      std::string("network.node.nic_bandwidth=") + bw});
    REQUIRE(r.step_time_s <= previous);
    previous = r.step_time_s;
  }
}

TEST_CASE("a higher Tensor Core rate makes the step faster", "[scenarios]") {
  const auto base = run_main_scenario();
  const auto faster = run_main_scenario({"hardware.gemm_mamf.rate=900TFLOP/s"});
  REQUIRE(faster.step_time_s < base.step_time_s);
}

TEST_CASE("the step breakdown adds up to the step time", "[scenarios]") {
  for (const char* rc : {"none", "selective", "full"}) {
    const auto r = run_main_scenario({std::string("training.recompute=") + rc});
    const auto& b = r.step.breakdown;
    REQUIRE(b.forward_s + b.backward_s + b.recompute_s + b.optimizer_s + b.comm_exposed[models::Channel::dp] + b.idle_s ==
            Approx(r.step_time_s).epsilon(1e-9));
  }
}

TEST_CASE("tokens/s × step time equals tokens per step, and MFU is below the GEMM ceiling", "[scenarios]") {
  const auto r = run_main_scenario();
  REQUIRE(r.tokens_per_s * r.step_time_s == Approx(1024.0 * 4096));
  REQUIRE(r.mfu > 0.0);
  REQUIRE(r.mfu < 794.5 / 989.4);  // cannot beat the best measured GEMM rate
  // Lower bound: the model's FLOPs at peak.
  REQUIRE(r.step_time_s >= r.flops.model * r.tokens_per_step / r.num_gpus / r.peak_flops);
}

TEST_CASE("the same scenario gives identical results", "[scenarios]") {
  const auto a = run_main_scenario();
  const auto b = run_main_scenario();
  REQUIRE(a.step_time_s == b.step_time_s);
  REQUIRE(a.step.events == b.step.events);
}

}}  // namespace CLUSTERSIM_TEST_ID
