// training.moe_grouped_gemm: deepgemm. DeepGEMM's grouped (contiguous-layout) FP8 kernel against its
// own measured rows (hardware/kernels/kernel_gemm.csv, deepseek-ai/DeepGEMM README on H800), the
// dense rows the anchor model already meets, and the loader's refusals.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "hardware/csv.hpp"
#include "hardware/kernel_cost.hpp"
#include "support/scenario_fixture.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using hardware::GroupedGemmKernel;
using hardware::Precision;

namespace {

struct DeepGemmRow {
  double groups, m, n, k, tflops;
  bool grouped;
};

// The H800 DeepGEMM rows of kernel_gemm.csv with M = 4096 per group or more (training shapes; the
// M = 64/128 rows and the masked grouped layout are decode shapes).
std::vector<DeepGemmRow> deepgemm_rows() {
  std::ifstream in(std::string(CLUSTERSIM_SOURCE_DIR) + "/hardware/kernels/kernel_gemm.csv");
  std::stringstream text;
  text << in.rdbuf();
  const auto records = hardware::parse_csv_records(text.str(), "kernel_gemm.csv");
  std::vector<DeepGemmRow> rows;
  for (const auto& r : records) {
    if (r.size() < 8 || r[0] != "H800-SXM5" || r[7].find("DeepGEMM") == std::string::npos) continue;
    if (r[3].empty() || r[2].find("masked") != std::string::npos) continue;  // a headline figure; decode's masked layout
    DeepGemmRow row{1, 0, std::stod(r[3]), std::stod(r[4]), std::stod(r[5]), r[7].find("grouped") != std::string::npos};
    if (row.grouped) std::sscanf(r[2].c_str(), "%lf groups x %lf", &row.groups, &row.m);
    else row.m = std::stod(r[2]);
    if (row.m >= 4096) rows.push_back(row);
  }
  return rows;
}

// The h800 profile with its in-step factors divided out: a kernel run alone, as the README measures.
hardware::GpuSpec h800_alone() {
  hardware::GpuSpec g = scenarios::load_scenario_string(
                            "model: llama2-7b\nhardware: h800\ncluster: {gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n",
                            "<test>")
                            .gpu;
  g.in_step_rate_ratio = g.compute_sustained_fraction = g.sustained_clock_ratio = 1.0;
  return g;
}

double tflops(const DeepGemmRow& r, double seconds) { return 2 * r.groups * r.m * r.n * r.k / seconds / 1e12; }

const char* kDsv3 = "model: deepseek-v3\nhardware: h800\ncluster: {gpus: 256}\n"
                    "parallelism: {pp: 8, ep: 32, zero_stage: 1}\n"
                    "training: {seq_len: 4096, global_batch: 512, precision: fp8, fp8_recipe: blockwise, "
                    "recompute: full, moe_dispatcher: deepep";

}  // namespace

TEST_CASE("DeepGEMM grouped FP8 GEMMs on H800: the dense kernel's efficiency, within 12 % of its eight rows", "[hardware][moe]") {
  const hardware::GpuSpec g = h800_alone();
  int grouped = 0;
  double log_cutlass = 0;
  for (const DeepGemmRow& r : deepgemm_rows()) {
    if (!r.grouped) continue;
    ++grouped;
    auto rate = [&](GroupedGemmKernel kernel) {
      return tflops(r, hardware::routed_gemm_cost(g, Precision::fp8, r.groups, r.m, r.n, r.k, true, kernel).time.si());
    };
    const double deepgemm = rate(GroupedGemmKernel::deepgemm), cutlass = rate(GroupedGemmKernel::cutlass);
    std::printf("  H800 DeepGEMM %g x %g, N %g K %g: measured %.0f, model deepgemm %.0f, cutlass %.0f TFLOP/s\n", r.groups,
                r.m, r.n, r.k, r.tflops, deepgemm, cutlass);
    INFO(r.groups << " x " << r.m << " N " << r.n << " K " << r.k << ": measured " << r.tflops << ", model " << deepgemm);
    CHECK(deepgemm == Approx(r.tflops).epsilon(0.12));
    log_cutlass += std::log(r.tflops / cutlass);
  }
  CHECK(grouped == 8);
  // The torch/CUTLASS grouped efficiency (fitted on other libraries' rows) is what these rows are not.
  CHECK(std::exp(log_cutlass / grouped) > 1.15);
}

TEST_CASE("DeepGEMM dense FP8 GEMMs on H800 at M = 4096: the anchor model within 15 % on 9 of 12", "[hardware]") {
  const hardware::GpuSpec g = h800_alone();
  int rows = 0, hits = 0;
  for (const DeepGemmRow& r : deepgemm_rows()) {
    if (r.grouped) continue;
    ++rows;
    const double model = tflops(r, hardware::gemm_cost(g, Precision::fp8, r.m, r.n, r.k).time.si());
    if (std::abs(model / r.tflops - 1) <= 0.15) ++hits;
    // Listed misses: N 32768 K 512 (590 and 751 measured), a short K the README's kernel runs far
    // below its other shapes and below the anchor model's tile/K-overhead estimate; and the first
    // README's N 24576 K 1536 (990, +16 % model; the later README measures 1,125 there).
    else CHECK((r.k == 512 || (r.k == 1536 && r.tflops < 1000)));
  }
  CHECK(rows == 12);
  CHECK(hits >= 9);
}

TEST_CASE("moe_grouped_gemm: deepgemm makes the expert GEMMs faster, and only them", "[moe][scenario]") {
  const auto cutlass = scenarios::simulate(scenarios::load_scenario_string(std::string(kDsv3) + "}\n", "a.yaml"));
  const auto deepgemm =
      scenarios::simulate(scenarios::load_scenario_string(std::string(kDsv3) + ", moe_grouped_gemm: deepgemm}\n", "b.yaml"));
  CHECK(deepgemm.step_time_s < cutlass.step_time_s);
  CHECK(deepgemm.memory.total_bytes == cutlass.memory.total_bytes);
}

TEST_CASE("moe_grouped_gemm: deepgemm is refused off Hopper FP8 blockwise, naming the key", "[moe][scenario]") {
  using Catch::Matchers::Contains;
  const std::string ok = std::string(kDsv3) + ", moe_grouped_gemm: deepgemm}\n";
  CHECK(testing::load_error_of(ok).empty());
  std::string bf16 = ok;
  bf16.replace(bf16.find("precision: fp8, fp8_recipe: blockwise"), 37, "precision: bf16");
  CHECK_THAT(testing::load_error_of(bf16), Contains("training.moe_grouped_gemm") && Contains("fp8_recipe: blockwise"));
  std::string delayed = ok;
  delayed.replace(delayed.find("blockwise"), 9, "delayed");
  CHECK_THAT(testing::load_error_of(delayed), Contains("training.moe_grouped_gemm") && Contains("fp8, delayed"));
  std::string b200 = ok;
  b200.replace(b200.find("h800"), 4, "b200");
  CHECK_THAT(testing::load_error_of(b200), Contains("training.moe_grouped_gemm") && Contains("Hopper"));
  std::string unknown = ok;
  unknown.replace(unknown.find("deepgemm"), 8, "triton");
  CHECK_THAT(testing::load_error_of(unknown), Contains("training.moe_grouped_gemm") && Contains("cutlass") && Contains("deepgemm"));
  CHECK_THAT(testing::load_error_of("model: llama2-7b\nhardware: h800\ncluster: {gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8, "
                        "moe_grouped_gemm: cutlass}\n"),
             Contains("training.moe_grouped_gemm") && Contains("dense model"));
}

}}  // namespace CLUSTERSIM_TEST_ID
