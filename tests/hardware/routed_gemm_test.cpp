// The grouped GEMM of an MoE rank's experts (hardware::routed_gemm_cost): against the measured
// grouped-GEMM rows of kernel_gemm.csv, and continuous in the routed token count, so a load
// imbalance of 1.0001 costs what 1.0 costs (issue 28: no cliff at 1.0).
#include <catch2/catch.hpp>

#include <cstdio>

#include "hardware/kernel_cost.hpp"
#include "scenarios/load.hpp"
#include "support/scenario_fixture.hpp"

using namespace clustersim;
using hardware::Precision;

namespace {
const hardware::GpuSpec& b200() {
  static const hardware::GpuSpec g = scenarios::load_scenario_string(
      "name: x\nmodel: llama2-7b\nhardware: b200\ncluster: {gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n", "<test>").gpu;
  return g;
}
}  // namespace

TEST_CASE("routed grouped GEMMs vs torchao B200 MXFP8 grouped GEMMs: fprop and dgrad within 15 %", "[hardware][moe]") {
  // kernel_gemm.csv, pytorch/ao torchao/prototype/moe_training/README.md @36027d82: 8 experts of
  // 16,384 tokens, torch._scaled_grouped_mm (CUTLASS), B200 1000 W.
  struct Row {
    const char* pass;
    double m, n, k;
    bool tokens_in_m;
    double tflops;
    bool known_gap;
  };
  // wgrad is a listed gap: the K-grouped (2D-2D) kernel runs at 0.79x the fprop rate in torchao's
  // table, which the tile/wave model does not see (the same tiles, a longer K); one row is not
  // enough to fit a wgrad-grouped efficiency. It must stay a miss until that is modelled.
  const Row rows[] = {{"fwd", 16384, 2048, 7168, true, 2303, false},
                      {"dgrad", 16384, 7168, 2048, true, 2286, false},
                      {"wgrad", 2048, 7168, 16384, false, 1830, true}};
  for (const Row& r : rows) {
    const double t = hardware::routed_gemm_cost(b200(), Precision::mxfp8, 8, r.m, r.n, r.k, r.tokens_in_m).time.si();
    const double model = 8 * 2 * r.m * r.n * r.k / t / 1e12;
    std::printf("  B200 MXFP8 grouped %s: measured %.0f, model %.0f TFLOP/s\n", r.pass, r.tflops, model);
    INFO(r.pass << ": measured " << r.tflops << ", model " << model);
    if (r.known_gap) CHECK_FALSE(model == Approx(r.tflops).epsilon(0.15));
    else CHECK(model == Approx(r.tflops).epsilon(0.15));
  }
}

TEST_CASE("a routed grouped GEMM is continuous in its token count", "[hardware][moe]") {
  const auto& g = b200();
  for (double m : {128.0, 512.0, 1024.0, 8192.0}) {
    INFO("mean tokens per expert " << m);
    const double at = hardware::routed_gemm_cost(g, Precision::bf16, 8, m, 5760, 2880, true).time.si();
    const double above = hardware::routed_gemm_cost(g, Precision::bf16, 8, m * 1.0001, 5760, 2880, true).time.si();
    CHECK(above >= at);
    CHECK(above <= at * 1.001);
  }
}

TEST_CASE("moe_load_imbalance has no cliff at 1.0", "[models][moe]") {
  const std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/gpt_oss_120b_64xh100.yaml";
  auto step = [&](const char* v) {
    return scenarios::simulate(scenarios::load_scenario_file(path, {std::string("training.moe_load_imbalance=") + v})).step_time_s;
  };
  const double one = step("1.0"), tiny = step("1.0001"), some = step("1.01"), more = step("1.1");
  CHECK(tiny >= one);
  CHECK(tiny <= one * 1.001);  // it was 13 % slower before (per-expert tile rows and the unaligned-M penalty)
  CHECK(some >= tiny);
  CHECK(more > some);
}
