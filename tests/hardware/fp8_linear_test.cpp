// An FP8 linear (forward + backward, casts included) against BF16 on H100, from the kernel models
// alone, compared with torchao's measured linear microbenchmarks (reference/kernels/
// fp8_speedups.csv, torchao float8 README @838e054b "Performance": float8 tensorwise linear
// fwd+bwd incl. casts vs BF16 on H100: 0.80x at M,K,N = 1024,2048,1024 and 1.39x at
// 4096,8192,16384). Small FP8 linears lose: the casts are memory-bound and the GEMMs too short
// to gain from the doubled Tensor Core rate.
#include <catch2/catch.hpp>

#include <iostream>

#include "hardware/kernel_cost.hpp"
#include "models/detail/layer_ops_recipe.hpp"
#include "scenarios/load.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using hardware::Precision;

namespace {

hardware::GpuSpec h100_isolated() {
  auto sc = scenarios::load_scenario_string(
      "model: llama2-7b\nhardware: h100-sxm\ncluster: {gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n",
      "<test>");
  // A microbenchmark, not a training step: no in-step ratio, no fitted scalar.
  sc.gpu.in_step_rate_ratio = 1.0;
  sc.gpu.compute_sustained_fraction = 1.0;
  return sc.gpu;
}

double quant_s(const hardware::GpuSpec& g, const models::QuantPass& q, double elements) {
  if (q.kernels == 0) return 0;
  // Each of the pass's kernels moves its share of the traffic.
  return q.kernels * hardware::memory_cost(g, units::Bytes(q.bytes_per_element * elements / q.kernels)).time.si();
}

// nn.Linear Y[M,N] = X[M,K]·Wᵀ, forward + backward (dgrad, wgrad), as torchao benchmarks it: the
// weight is cast on every call (no amortization over micro-batches).
double linear_s(const hardware::GpuSpec& g, const models::LinearRecipe& r, double m, double k, double n) {
  const Precision p = r.gemm;
  double t = hardware::gemm_cost(g, p, m, n, k).time.si() + hardware::gemm_cost(g, p, m, k, n).time.si() +
             hardware::gemm_cost(g, p, k, n, m).time.si();
  return t + quant_s(g, r.activation, m * k) + quant_s(g, r.gradient, m * n) + quant_s(g, r.weight, n * k);
}

double fp8_speedup(double m, double k, double n) {
  const auto g = h100_isolated();
  models::TrainingSpec bf16, fp8;
  bf16.precision = Precision::bf16;
  fp8.precision = Precision::fp8;
  fp8.fp8_recipe = models::Fp8Recipe::tensorwise;
  fp8.fp8_auto_filter = false;
  return linear_s(g, models::linear_recipe(bf16, n, k), m, k, n) / linear_s(g, models::linear_recipe(fp8, n, k), m, k, n);
}

}  // namespace

TEST_CASE("FP8 tensorwise linear speed-up vs torchao's H100 microbenchmark rows", "[hardware][kernels][fp8]") {
  const double small = fp8_speedup(1024, 2048, 1024), large = fp8_speedup(4096, 8192, 16384);
  std::cout << "FP8/BF16 linear fwd+bwd on h100-sxm: 1024,2048,1024 -> " << small << "x (measured 0.80x); "
            << "4096,8192,16384 -> " << large << "x (measured 1.39x)\n";
  // Large linear: the GEMMs dominate and the FP8 gain is the FP8/BF16 MAMF ratio less the casts.
  CHECK(large == Approx(1.39).epsilon(0.15));
  // Small linear: FP8 loses, as measured (the reason torchao's auto-filter keeps such layers in
  // BF16). The model loses more than measured (about 0.5x against 0.80x): each of the six cast
  // kernels pays the profile's eager per-kernel latency and gap (2 + 2.5 us on H100), which the
  // torch.compile'd benchmark largely fuses away. So small FP8 linears are modelled too SLOW,
  // not too fast (tests/validation/VALIDATION.md, known gaps).
  CHECK(small < 1.0);
  CHECK(small > 0.4);
}

}}  // namespace CLUSTERSIM_TEST_ID
