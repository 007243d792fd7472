// Holdout check: published training runs that are NOT rows of the validation CSVs
// (tests/external/runs.csv: Llama 3 paper Table 4, MT-NLG 530B, Megatron-Core MoE model-zoo Qwen3-235B,
// NVIDIA dgxc-benchmarking v25.05.05 Nemotron-4 / DeepSeek-V3 / Grok-1 / Llama 4 Maverick on H100 and GB200,
// Megatron-LM's DeepSeek-V3 GB200 optimization guide, Megatron-Bridge's verification cards: DeepSeek-V4-Flash on GB200,
// Nemotron 3 Super and DeepSeek-V3 on H100; the model zoo's Qwen3-235B long-context, GB200 and PP32 rows),
// written as the scenario YAMLs a user would write and run through the normal loader and simulator.
// None of these runs was used to fit or tune any constant. The guards below are regression guards
// set at the MAPE measured when the set was added (rounded up to the next whole percent), not
// targets: issue #13 asks <= 10 % for dense, #15 <= 15 % for MoE; see tests/validation/VALIDATION.md,
// "Runs outside the repository's tables".
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

struct ExternalRun {
  std::string id, scenario, kind, gpu, basis;
  double measured = 0;
};

const std::string kDir = std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/external/";

// runs.csv has no quoted fields (checked: a row must split into exactly 8 fields).
std::vector<ExternalRun> read_runs() {
  std::ifstream in(kDir + "runs.csv");
  REQUIRE(in.good());
  std::string line;
  std::getline(in, line);
  REQUIRE(line == "id,scenario,kind,gpu,measured,basis,quoted,source_url");
  std::vector<ExternalRun> runs;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    INFO(line);
    REQUIRE(f.size() == 8);
    runs.push_back({f[0], f[1], f[2], f[3], f[5], std::stod(f[4])});
  }
  return runs;
}

double predicted(const scenarios::Report& r, const std::string& basis) {
  if (basis == "mfu") return r.mfu;
  REQUIRE(basis == "tokens_per_s_per_gpu");
  return r.tokens_per_s_per_gpu;
}

// Prints predicted vs measured for `kind` and returns the mean absolute percentage error.
double mape_of(const std::vector<ExternalRun>& runs, const std::string& kind, int* count) {
  double sum = 0;
  *count = 0;
  std::map<std::string, std::pair<double, int>> by_gpu;  // the MAPE per GPU type, printed to show where misses sit
  for (const auto& run : runs) {
    if (run.kind != kind) continue;
    const auto report = scenarios::simulate(scenarios::load_scenario_file(kDir + run.scenario));
    const double p = predicted(report, run.basis);
    const double err = p / run.measured - 1;
    std::printf("  %-20s %-10s %-22s measured %10.4g  predicted %10.4g  error %+6.1f %%%s\n", run.id.c_str(),
                run.gpu.c_str(), run.basis.c_str(), run.measured, p, 100 * err,
                report.memory.fits() ? "" : "  (simulator says: does not fit)");
    sum += std::abs(err);
    ++*count;
    by_gpu[run.gpu].first += std::abs(err);
    ++by_gpu[run.gpu].second;
  }
  for (const auto& [gpu, acc] : by_gpu)
    std::printf("  %s MAPE on %s: %.1f %% over %d runs\n", kind.c_str(), gpu.c_str(), 100 * acc.first / acc.second, acc.second);
  return *count ? sum / *count : 0;
}

}  // namespace

TEST_CASE("external: every external scenario has one runs.csv row", "[validation][external]") {
  const auto runs = read_runs();
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(kDir))
    if (e.path().extension() == ".yaml") ++files;
  CHECK(files == static_cast<int>(runs.size()));
  for (const auto& run : runs) {
    INFO(run.id);
    CHECK(std::filesystem::exists(kDir + run.scenario));
    CHECK((run.kind == "dense" || run.kind == "moe"));
    CHECK(run.measured > 0);
  }
}

TEST_CASE("external: dense runs outside the tables, MAPE guard", "[validation][external]") {
  int n = 0;
  std::printf("external dense runs (never fitted):\n");
  const double mape = mape_of(read_runs(), "dense", &n);
  std::printf("  dense MAPE %.1f %% over %d runs (issue #13 target: <= 10 %%)\n", 100 * mape, n);
  CHECK(n == 10);
  CHECK(mape <= 0.105);  // measured 10.0 % on 2026-12-05: the two GB200 runs +17 % at the global constant (every
                         // dense Blackwell row is in the held-out split); 8.2 % over 10 on 2026-12-03 (7.9 % before the Megatron rank order and
                         // P2P-overlap defaults and NVL72 segments); a regression guard, not a fit
}

TEST_CASE("external: MoE runs outside the tables, MAPE guard", "[validation][external]") {
  int n = 0;
  std::printf("external MoE runs (never fitted):\n");
  const double mape = mape_of(read_runs(), "moe", &n);
  std::printf("  MoE MAPE %.1f %% over %d runs (issue #15 target: <= 15 %%)\n", 100 * mape, n);
  CHECK(n == 26);
  // measured 21.1 % over 26 on 2026-12-08 with the zoo's 2026 H100 Qwen3-235B configuration (DeepEP, A2A overlap,
  // partial graphs: +5.9 %); 21.8 % over 25 the same day with two tuned Megatron-Bridge verification-card runs on H100 (Nemotron 3
  // Super +6.3 %, DeepSeek-V3 on 1,024 GPUs with the alltoall dispatcher -24.1 %), the model zoo's four Qwen3-235B
  // long-context runs (16k-128k, CP 1-8: +0.9 to -4.2 %), its two GB200 runs (BF16 at MBS 1 -37.6 %: host-bound in
  // the model, not in the run; 128k MXFP8 -24.0 %) and its alltoall PP32 row (+32.4 %); 25.6 % over 16 before
  // (stop 54); 26.4 % over 16 on 2026-12-07 (each block kind reruns its own attention core) and 26.7 % with
  // DeepSeek-V4-Flash's BF16 card run on 64 GB200 (+34 %, the V4 kernels' gap, docs/reference/deepseek_v4.md); 26.2 %
  // over 15 on 2026-12-06 with the recipe's quantize kernels around the expert linears; 27.2 % before (31.9 % before
  // the dispatch call's measured host time and DeepEP's own SMs); 41.8 % over 15 on 2026-12-03 with the DeepSeek-V3
  // report's 2,048 H800 (-2.8 %); 44.5 % over 14 (39.0 % before issue 28's routed grouped GEMM and A2A tails made MoE
  // steps faster: the Qwen3 TP4 EP8 run +25 -> +59
  // %); three host-bound DeepSeek-V3 runs on GB200 at +123 / +154 / +154 % carry most of it, see VALIDATION.md; above
  // the #15 target; a regression guard, not a fit
  CHECK(mape <= 0.22);
}

}}  // namespace CLUSTERSIM_TEST_ID
