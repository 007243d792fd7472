// The AMD rows (data/validation/published_amd.csv, a verbatim copy of the DENSE-AMD rows of
// docs/reference/validation/published_newhw.csv): issue #17 item 4. They are OUT OF SAMPLE — no
// profile constant is fitted to them (calibration reads data/validation/published.csv only) —
// and few (6 simulated), so this guards the figure measured when the test was written plus a
// small margin, not a target. VALIDATION.md "AMD Instinct rows" has the per-row table.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>

#include "validation/validation.hpp"
#include "validation/validation_amd.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::studies;

namespace {
constexpr double kMaxAmdMape = 0.27;  // measured 0.262 on 6 rows on 2026-12-01 (mi300x/mi325x profiles as shipped)

// Rows predicted more than 25 % off, each with its physics reason. A listed row that comes
// within 25 % fails too, so the list cannot go stale.
const std::map<std::string, const char*> kFarOff = {
    {"DENSE-AMD-005", "70B BF16 FSDP2 on 8 MI325X predicted 28 % too slow: compute-bound (exposed communication 0.3 % "
                      "of the step), so the mi325x profile's sustained BF16 GEMM and attention rates undershoot what "
                      "Primus-Turbo reaches (the measured run implies ~57 % HFU with full recompute, we model ~40 %)"},
    {"DENSE-AMD-006", "the same run on 64 MI325X predicted 44 % too slow: the compute gap of -005 plus 16 % of the step "
                      "in exposed FSDP all-gather/reduce-scatter over 8 x 400G per node, where the measured run shows "
                      "none (1,174 tokens/s/GPU on 64 GPUs vs 1,135 on 8)"},
};

ValidationSummary amd_validated() {
  return validate_table(read_csv_file(CLUSTERSIM_SOURCE_DIR "/data/validation/published_amd.csv"));
}
const RowOutcome& outcome(const ValidationSummary& s, const std::string& id) {
  for (const auto& r : s.rows)
    if (r.id == id) return r;
  FAIL("no row " << id);
  return s.rows.front();
}
}  // namespace

TEST_CASE("AMD rows: the projection table's 'Batch' becomes the micro-batch with global batch and recompute from AMD's commands",
          "[validation][amd]") {
  const CsvTable t = read_csv_file(CLUSTERSIM_SOURCE_DIR "/data/validation/published_amd.csv");
  std::map<std::string, std::map<std::string, std::string>> rows;
  for (const auto& r : t.rows) rows[r.at("id")] = r;
  REQUIRE(rows.size() == 8);
  auto has = [](const RowScenario& rs, const std::string& line) { return rs.scenario.yaml().find(line) != std::string::npos; };

  // 8B FP8, Megatron DDP + distributed optimizer: MBS 2, 8 micro-batches per step (MBS=2 BS=128 on 8 GPUs).
  const RowScenario r1 = row_scenario(rows.at("DENSE-AMD-001"));
  REQUIRE(r1.reason.empty());
  CHECK(has(r1, "zero_stage: 1\n"));
  CHECK(has(r1, "  seq_len: 8192\n  global_batch: 128\n  micro_batch: 2\n  precision: fp8\n  recompute: none\n"));
  const RowScenario r2 = row_scenario(rows.at("DENSE-AMD-002"));
  CHECK(has(r2, "  global_batch: 1024\n  micro_batch: 2\n"));
  // 70B FSDP2: one micro-batch per step, every layer recomputed.
  const RowScenario r4 = row_scenario(rows.at("DENSE-AMD-004"));
  CHECK(has(r4, "zero_stage: 3\n"));
  CHECK(has(r4, "  global_batch: 256\n  micro_batch: 4\n  precision: fp8\n  recompute: full\n"));
  const RowScenario r6 = row_scenario(rows.at("DENSE-AMD-006"));
  CHECK(has(r6, "  global_batch: 64\n  micro_batch: 1\n  precision: bf16\n  recompute: full\n"));
  // Every filled cell is stated as an assumption with its source.
  bool cited = false;
  for (const auto& a : r6.assumptions) cited |= a.find("FSDP=1: MBS=3 BS=24") != std::string::npos;
  CHECK(cited);
  // A row that publishes its batch is left alone.
  auto published = rows.at("DENSE-AMD-001");
  published["micro_batch"] = "1";
  published["global_batch"] = "64";
  std::vector<std::string> assumptions;
  CHECK(with_projection_batch(published, &assumptions) == published);
  CHECK(assumptions.empty());
}

TEST_CASE("AMD rows: out-of-sample MAPE <= 27% on the 6 MI325X rows and the pipeline-blog rows listed with the reason",
          "[validation][amd]") {
  const ValidationSummary s = amd_validated();
  REQUIRE(s.rows.size() == 8);
  INFO("AMD rows: MAPE " << 100 * s.overall.flagged.mape << "% on " << s.overall.flagged.count << " rows, worst "
                         << 100 * s.overall.flagged.worst << "% (" << s.overall.flagged.worst_id << ")");
  // All flagged (the AMD profiles are partly estimated), so none enters the headline figures.
  CHECK(s.overall.headline.count == 0);
  CHECK(s.overall.simulated == 6);
  CHECK(s.overall.flagged.mape <= kMaxAmdMape);
  for (const char* id : {"DENSE-AMD-007", "DENSE-AMD-008"}) {
    const RowOutcome& o = outcome(s, id);
    CHECK_FALSE(o.simulated);
    CHECK(o.reason == "seq_len blank");  // the pipeline blog states no sequence length, batch or precision
  }
  for (const auto& o : s.rows) {
    if (!o.simulated) continue;
    INFO(o.id << ": predicted " << o.predicted_tps_gpu << " vs measured " << o.measured_tps_gpu << " tokens/s/GPU ("
              << 100 * o.error << "%)");
    CHECK(o.fits_memory);
    CHECK((std::abs(o.error) > 0.25) == (kFarOff.count(o.id) == 1));
  }
}

TEST_CASE("AMD rows: the reading the sources leave open (micro-batches per step) moves a row under 3% (10% on "
          "DENSE-AMD-002) and gives MAPE <= 28.5%", "[validation][amd]") {
  // The sources state 'Batch' but not the gradient accumulation of the measured runs; the
  // documented commands give 8 (DDP) and 1 (FSDP). The other reading swaps them. Only the
  // 64-GPU DDP row moves much: with one micro-batch per step its inter-node gradient
  // reduce-scatter is no longer hidden behind 7 more micro-batches.
  const CsvTable t = read_csv_file(CLUSTERSIM_SOURCE_DIR "/data/validation/published_amd.csv");
  int compared = 0;
  double other_mape = 0;
  for (const auto& r : t.rows) {
    const RowOutcome documented = validate_row(r);
    if (!documented.simulated) continue;
    std::vector<std::string> ignored;
    const RowOutcome other = validate_row(with_projection_batch(r, &ignored, ProjectionBatchReading{1, 8}));
    REQUIRE(other.simulated);
    const double spread = other.predicted_tps_gpu / documented.predicted_tps_gpu - 1;
    INFO(documented.id << ": " << documented.predicted_tps_gpu << " vs " << other.predicted_tps_gpu << " tokens/s/GPU");
    CHECK(std::abs(spread) < (documented.id == "DENSE-AMD-002" ? 0.105 : 0.03));  // measured -9.8 % on -002
    other_mape += std::abs(other.error);
    ++compared;
  }
  REQUIRE(compared == 6);
  CHECK(other_mape / compared <= 0.285);  // measured 0.278
}

}}  // namespace CLUSTERSIM_TEST_ID
