// The grouped GEMM of an MoE rank's experts (hardware::routed_gemm_cost): against the measured
// grouped-GEMM rows of kernel_gemm.csv, and continuous in the routed token count, so a load
// imbalance of 1.0001 costs what 1.0 costs (issue 28: no cliff at 1.0).
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>

#include "hardware/kernel_cost.hpp"
#include "scenarios/load.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using hardware::Precision;

namespace {
// A shipped hardware profile as the loader builds it.
hardware::GpuSpec profile(const std::string& name) {
  return scenarios::load_scenario_string("name: x\nmodel: llama2-7b\nhardware: " + name +
                                             "\ncluster: {gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n",
                                         "<test>")
      .gpu;
}
const hardware::GpuSpec& b200() {
  static const hardware::GpuSpec g = profile("b200");
  return g;
}
// The profile's in-step factors, divided out to compare a model rate with a kernel run alone.
double in_step(const hardware::GpuSpec& g) {
  return g.in_step_rate_ratio * g.compute_sustained_fraction * g.sustained_clock_ratio;
}
}  // namespace

TEST_CASE("routed grouped GEMMs vs torchao B200 MXFP8 grouped GEMMs: fprop and dgrad within 15 % alone (in sample), wgrad a gap", "[hardware][moe]") {
  // kernel_gemm.csv, pytorch/ao torchao/prototype/moe_training/README.md @36027d82: 8 experts of
  // 16,384 tokens, torch._scaled_grouped_mm (CUTLASS), B200 1000 W.
  struct Row {
    const char* pass;
    double m, n, k;
    bool tokens_in_m;
    double tflops;
    bool known_gap;
  };
  // Compared alone: the model's rate with the profile's in-step factors divided out (this test used
  // to compare the in-step rate with the isolated benchmark, and passed through the fitted factor).
  // With the dense FP8 anchor's efficiency the model ran these 29-39 % fast; fprop and dgrad are two
  // of the 8 rows kGroupedLowPrecisionEfficiency (hardware/kernel_cost.cpp) is fitted on, so this
  // is an in-sample check of that fit, not accuracy. wgrad stays a listed gap: the K-grouped kernel
  // runs at 0.79x the fprop rate, which the tile/wave model does not see.
  const Row rows[] = {{"fwd", 16384, 2048, 7168, true, 2303, false},
                      {"dgrad", 16384, 7168, 2048, true, 2286, false},
                      {"wgrad", 2048, 7168, 16384, false, 1830, true}};
  const double alone = in_step(b200());
  for (const Row& r : rows) {
    const double t = hardware::routed_gemm_cost(b200(), Precision::mxfp8, 8, r.m, r.n, r.k, r.tokens_in_m).time.si();
    const double model = 8 * 2 * r.m * r.n * r.k / t / 1e12 / alone;
    std::printf("  B200 MXFP8 grouped %s: measured %.0f, model %.0f TFLOP/s\n", r.pass, r.tflops, model);
    INFO(r.pass << ": measured " << r.tflops << ", model " << model);
    if (r.known_gap) CHECK(model > 1.15 * r.tflops);
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

TEST_CASE("routed grouped GEMMs vs torch._grouped_mm on H200, BF16, small experts: within 15 % alone", "[hardware][moe]") {
  // hardware/kernels/grouped_gemm_h200.csv, measured by this project on the lent H200: 8 experts of
  // Qwen3-30B-A3B's shapes (fc1 K 2048 N 1536, fc2 K 768 N 2048) at 512..8192 tokens each. The model's
  // rate is an in-step rate: the profile's in-step factors (in_step_rate_ratio, the fitted
  // compute_sustained_fraction, sustained_clock_ratio) are divided out to compare with a kernel run alone.
  static const hardware::GpuSpec h200 = profile("h200-sxm");
  struct Row { double t, k, n, fwd, dgrad, wgrad; };
  const Row rows[] = {{512, 2048, 1536, 452.5, 529.5, 438.3},   {512, 768, 2048, 399.3, 393.7, 356.4},
                      {1024, 2048, 1536, 631.7, 621.9, 584.2},  {1024, 768, 2048, 491.6, 455.1, 513.9},
                      {2048, 2048, 1536, 688.6, 668.6, 686.3},  {2048, 768, 2048, 550.7, 627.2, 624.1},
                      {4096, 2048, 1536, 714.8, 705.8, 717.7},  {4096, 768, 2048, 557.6, 639.8, 683.6},
                      {8192, 2048, 1536, 702.6, 676.2, 704.7},  {8192, 768, 2048, 522.2, 603.8, 673.0}};
  for (const Row& r : rows) {
    const double flop = 2 * 8 * r.t * r.k * r.n;
    auto rate = [&](double m, double n, double k, bool tokens_in_m) {
      return flop / hardware::routed_gemm_cost(h200, Precision::bf16, 8, m, n, k, tokens_in_m).time.si() / 1e12 / in_step(h200);
    };
    const double fwd = rate(r.t, r.n, r.k, true), dgrad = rate(r.t, r.k, r.n, true), wgrad = rate(r.k, r.n, r.t, false);
    std::printf("  H200 8 x %5.0f tokens, K %4.0f N %4.0f: fwd %5.0f / %5.0f  dgrad %5.0f / %5.0f  wgrad %5.0f / %5.0f TFLOP/s (model / measured)\n",
                r.t, r.k, r.n, fwd, r.fwd, dgrad, r.dgrad, wgrad, r.wgrad);
    for (auto [model, measured] : {std::pair{fwd, r.fwd}, {dgrad, r.dgrad}, {wgrad, r.wgrad}}) {
      INFO(r.t << " tokens, K " << r.k << " N " << r.n << ": model " << model << ", measured " << measured);
      // Listed gap: the token-grouped wgrad at 512 tokens per expert runs 17-25 % below the model
      // (as torchao's B200 wgrad row above); it must stay a miss until that kernel is modelled.
      // Also listed: fc2's forward (K 768) at 8,192 tokens per expert, measured below its 4,096-token
      // rate (522 vs 558 TFLOP/s: the library's kernel choice at that shape), 19 % under the model.
      const bool gap = (r.t == 512 && model == wgrad) || (r.t == 8192 && r.k == 768 && model == fwd);
      if (gap) CHECK(model > 1.15 * measured);
      else CHECK(model == Approx(measured).epsilon(0.15));
    }
  }
}

TEST_CASE("routed FP8 grouped GEMMs vs torch._scaled_grouped_mm (rowwise) on H200: within 30 % alone (in sample)", "[hardware][moe]") {
  // hardware/kernels/fp8_grouped_gemm_h200.csv, measured by this project on the lent H200 (forward,
  // quantization not included). The model's rate with the in-step factors divided out. With the dense
  // FP8 anchor's efficiency alone (1,453 TFLOP/s; rowwise _scaled_mm 8192^3 here: 1,543) the model ran
  // these 12-65 % fast; they are 6 of the 8 rows kGroupedLowPrecisionEfficiency is fitted on, so
  // this checks the fit's residuals (in sample, not accuracy): the worst is fc2 at 1,024 tokens.
  static const hardware::GpuSpec h200 = profile("h200-sxm");
  struct Row { double e, t, k, n, fp8; };
  const Row rows[] = {{8, 1024, 2048, 1536, 817.3}, {8, 1024, 768, 2048, 522.8}, {8, 4096, 2048, 1536, 1085.2},
                      {8, 4096, 768, 2048, 791.6},  {8, 16384, 7168, 2048, 1108.8}, {4, 4096, 7168, 4096, 1146.5}};
  for (const Row& r : rows) {
    const double t = hardware::routed_gemm_cost(h200, Precision::fp8, r.e, r.t, r.n, r.k, true).time.si();
    const double model = 2 * r.e * r.t * r.k * r.n / t / 1e12 / in_step(h200);
    std::printf("  H200 FP8 %g x %5.0f tokens, K %4.0f N %4.0f: model %5.0f / measured %5.0f TFLOP/s\n", r.e, r.t, r.k, r.n,
                model, r.fp8);
    INFO(r.t << " tokens, K " << r.k << " N " << r.n << ": model " << model << ", measured " << r.fp8);
    CHECK(model == Approx(r.fp8).epsilon(0.30));
  }
}

}}  // namespace CLUSTERSIM_TEST_ID
