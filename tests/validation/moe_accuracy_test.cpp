// Regression guard on the accuracy against the published MoE runs (issue 15): the headline is
// the latest release of each configuration, simulated and without quality flags (README_moe
// caveat 2). Every MoE row is out of sample: the one fitted constant per profile
// (compute_sustained_fraction) is fitted on the dense table only, and calibrate skips MoE rows,
// so the leave-one-family-out MAPE equals the headline MAPE. The bar is the figure measured when
// this test was last updated plus a small margin: a change that makes the MoE predictions worse,
// or silently drops rows, fails here. The targets (MAPE <= 12 %, LOFO <= 15 %) are NOT
// met: tests/validation/VALIDATION.md "MoE runs" lists the misses and their physics reasons.
#include <catch2/catch.hpp>

#include <cmath>

#include "validation/calibrate.hpp"
#include "validation/conventions.hpp"
#include "validation/validation.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::studies;

namespace {
constexpr double kMaxMoeHeadlineMape = 0.27;  // measured 0.253 on 2026-12-06 (0.256 before current scaling's one-thread
                                              // kernels) once the recipe's quantize kernels run
                                              // around every expert, MLA, Mamba and MTP linear (per-split TE
                                              // quantizers: docs/recipes.md); 0.341 on 2026-12-05: the held-out split
                                              // by source and date took every dense Blackwell row out of the fit, so
                                              // B200/GB200 run at the global constant 0.97 (their own rows said 0.84);
                                              // 0.293 before, on 51 headline rows on 2026-12-04 with FP8/MXFP8 grouped
                                              // GEMMs at their measured efficiency (kGroupedLowPrecisionEfficiency,
                                              // kernel rows); 0.325 before that, with one fitted constant per GPU die
                                              // (B200 takes GB200's 0.84, not the global 0.97); 0.358 before that,
                                              // after the node's measured host CPU time per op (Grace 2.75x x86, a TE
                                              // module call 2.7 plain ops: TransformerEngine #2053): the 39 earlier
                                              // rows 41.5 -> 38.7 %, the 12 Nemotron 3 rows 55.0 -> 24.5 % (26.2 % with
                                              // the CUDA-graph scope their notes quote). Before: 0.447 on 51 headline
                                              // rows on 2026-12-04 (issue 29: the 12 Nemotron 3 Nano / Super headline
                                              // rows, simulated for the first time, at 55.0 %; no earlier row moved).
                                              // Before: 0.42, measured 0.415 on 39 headline rows on 2026-12-04 (issue
                                              // 28), every row now predicted too fast (bias H100 +27 %, GB200 +30 %,
                                              // B300 +31 %, B200 +55 %): three corrections removed errors that had been
                                              // cancelling a missing slowdown — the Megatron-Bridge recipes' BF16
                                              // gradient reduction (+2.2 points), cudnn-frontend's window-128
                                              // GPT-OSS attention rates no longer read as full causal hdim-64
                                              // rates on GB200/GB300/B300 (+6.6) and expert gradients reduced
                                              // during the backward as Megatron's DDP buckets them (+2.8).
                                              // VALIDATION.md "MoE runs" gives the per-layer evidence of what is
                                              // still missing. 0.2985 on 2026-12-03, 0.248 before issue 28.
constexpr int kMinMoeHeadlineRows = 51;
constexpr int kMinMoeSimulatedRows = 197;  // 145 before issue 29's 52 Nemotron 3 Nano / Super rows
// The hybrid Mamba-Transformer rows (Nemotron 3 Nano and Super, their presets): every one simulated;
// their headline MAPE (issue 29 target 15 % NOT met on 2026-12-06: Megatron-Bridge's rows are within
// 16 % on GB200, B300 and H100, but B200 is +24 to +43 % and NeMo AutoModel's two H100 rows are 25 and
// 32 % too slow under full recompute; see docs/reference/mamba2_ssd.md).
constexpr int kHybridRows = 52;
// 0.25: measured 0.249 on 2026-12-04 after the NeMo AutoModel Nemotron rows took their benchmark
// configs' activation_checkpointing: true and BF16 Adam state (they did not fit before: 173 and
// 135 GiB; now they fit and run full recompute, 31 and 24 % too slow). Before that, 0.211
// 0.30: measured 0.289 on 2026-12-05 after the GB200 Super rows 015/016 (26.08) took their
// release's hybridep dispatcher, graphs and TP overlap off (row_recipes.csv): −17 → +38/+41 %;
// then 0.272 once the Triton SSD kernels run at their Blackwell rate (hardware::warp_mma_slowdown).
// 0.19: measured 0.173 on 2026-12-06 (0.169 before current scaling's one-thread kernels) once the
// quantize kernels run around the Mamba and expert linears; 0.274 on 2026-12-05 (B200 at the global constant, held-out
// split); 0.249 on 12 headline rows with grouped FP8 GEMMs measured (0.239 before), the fit per die (0.262 before), the
// host CPU per op and the graph scope each row's notes quote (0.550 before both).
constexpr double kMaxHybridHeadlineMape = 0.19;
}  // namespace

TEST_CASE("published MoE runs: headline MAPE <= 27% (issue target 12% not met), all out of sample",
          "[validation][moe_accuracy]") {
  const CsvTable table = parse_csv(published_moe_csv_text(), "published_moe.csv");
  ValidationSummary s = validate_table(table);
  add_out_of_sample(table, "", &s);
  REQUIRE(s.rows.size() == 210);
  INFO("MoE headline: MAPE " << 100 * s.overall.headline.mape << "% on " << s.overall.headline.count
                             << " rows, worst " << 100 * s.overall.headline.worst << "% (" << s.overall.headline.worst_id
                             << "); simulated " << s.overall.simulated);
  CHECK(s.overall.simulated >= kMinMoeSimulatedRows);
  CHECK(s.overall.headline.count >= kMinMoeHeadlineRows);
  CHECK(s.overall.headline.mape <= kMaxMoeHeadlineMape);
  // Nothing is refitted on MoE rows: no out-of-sample refit exists to report.
  CHECK_FALSE(s.overall.held_out.has_value());
  // Every simulated row is either in the headline or says why not.
  for (const auto& r : s.rows) CHECK((r.simulated || !r.reason.empty()));
}

TEST_CASE("published hybrid Mamba-Transformer MoE runs are simulated: headline MAPE <= 19% (issue target 15% not met)",
          "[validation][moe_accuracy]") {
  const CsvTable table = parse_csv(published_moe_csv_text(), "published_moe.csv");
  const ValidationSummary s = validate_table(table);
  int simulated = 0, headline = 0;
  double sum = 0;
  for (const RowOutcome& r : s.rows) {
    if (r.model_name.find("Nemotron 3 Nano") == std::string::npos && r.model_name.find("Nemotron 3 Super") == std::string::npos)
      continue;
    if (!r.simulated) continue;
    ++simulated;
    if (r.headline()) ++headline, sum += std::abs(r.error);
  }
  CHECK(simulated == kHybridRows);
  REQUIRE(headline >= 12);
  INFO("hybrid headline MAPE " << 100 * sum / headline << "% on " << headline << " rows");
  CHECK(sum / headline <= kMaxHybridHeadlineMape);
}
}}  // namespace CLUSTERSIM_TEST_ID
