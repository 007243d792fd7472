// The same published job on two GPU types (validation/hardware_pairs.hpp): the pairing on a small
// table worked out by hand, then the published MoE pairs as oracles of the hardware model.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "validation/conventions.hpp"
#include "validation/hardware_pairs.hpp"
#include "validation/validation.hpp"

namespace {
namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::studies;

namespace {

const char* kHeader =
    "id,model_name,gpu_type,num_gpus,precision,seq_len,global_batch,tp,pp,cp,ep,etp,vpp,micro_batch,source\n";

std::string row(const std::string& id, const std::string& gpu, const std::string& release,
                const std::string& micro_batch = "4") {
  return id + ",Toy-MoE," + gpu + ",8,mxfp8,4096,512,1,1,1,8,1,," + micro_batch + ",toy summary " + release +
         " NeMo container\n";
}

RowOutcome outcome(const std::string& id, double measured, double predicted) {
  RowOutcome o;
  o.id = id, o.measured_tps_gpu = measured, o.predicted_tps_gpu = predicted, o.simulated = true;
  o.error = predicted / measured - 1;
  return o;
}

}  // namespace

TEST_CASE("hardware pairs: one job and release on two GPU types is a pair, another release or layout is not",
          "[validation]") {
  // 26.04: B200 100 measured / 100 predicted, GB200 150 / 120: GB200 over B200 measured 1.5,
  // predicted 1.2, ratio error 1.2 / 1.5 - 1 = -20 %. The 26.06 B300 row is another release; the
  // B300 row at micro-batch 8 another layout; the last B200 row is not simulated.
  const CsvTable t = parse_csv(std::string(kHeader) + row("MOE-X-001", "B200", "26.04") +
                                   row("MOE-X-002", "GB200", "26.04") + row("MOE-X-003", "B300", "26.06") +
                                   row("MOE-X-004", "B300", "26.04", "8") + row("MOE-X-005", "B200", "26.06"),
                               "toy");
  RowOutcome unsimulated = outcome("MOE-X-005", 100, 100);
  unsimulated.simulated = false;
  const auto h =
      hardware_pairs(t, {outcome("MOE-X-001", 100, 100), outcome("MOE-X-002", 150, 120), outcome("MOE-X-003", 110, 130),
                         outcome("MOE-X-004", 90, 80), unsimulated, outcome("MOE-X-006", 40, 50)});
  REQUIRE(h);
  REQUIRE(h->pairs.size() == 1);
  const HardwarePair& p = h->pairs.front();
  CHECK(p.a_id == "MOE-X-002");  // GB200 sorts after B200: the ratio is GB200 over B200
  CHECK(p.b_id == "MOE-X-001");
  CHECK(p.measured_ratio == Approx(1.5));
  CHECK(p.predicted_ratio == Approx(1.2));
  CHECK(p.error() == Approx(-0.2));
  REQUIRE(h->classes.size() == 1);
  CHECK(h->classes.front().gpus == "GB200/B200");
  CHECK(h->classes.front().mean_error == Approx(-0.2));
  CHECK(h->mape == Approx(0.2));
}

TEST_CASE("hardware pairs: a table without a job on two GPU types gives none", "[validation]") {
  const CsvTable t =
      parse_csv(std::string(kHeader) + row("MOE-X-001", "B200", "26.04") + row("MOE-X-002", "B200", "26.06"), "toy");
  CHECK_FALSE(hardware_pairs(t, {outcome("MOE-X-001", 100, 100), outcome("MOE-X-002", 120, 110)}));
}

// The published MoE jobs Megatron-Bridge ran on several GPU types with one release, layout,
// sharding and recompute recipe. The
// B200, B300 and GB300 profiles agree with each other on these: every pair among them (14) is
// checked within 10 % of its measured ratio. The GB200 pairs are a listed gap (VALIDATION.md "Stop 54"):
// on the small-expert jobs at micro-batch 2-4 (Nemotron 3 Nano, Qwen3-30B-A3B) GB200 measured 0.96-1.00x
// B200 and is predicted 0.76-0.83x, its Grace host's per-op cost (37.1 us, TE #2053) exposed
// between the per-layer syncs; the same job at micro-batch 8 on GB300, the same Grace host, matches
// B300 within 3.5 %. These are checked to stay more than 10 % off, so closing them fails here and
// moves them to the first check.
TEST_CASE("hardware pairs: the published MoE jobs on two GPU types", "[validation][moe]") {
  const CsvTable table = parse_csv(published_moe_csv_text(), "published_moe.csv");
  const ValidationSummary s = validate_table(table);
  REQUIRE(s.hardware_pairs);
  int consistent = 0, grace_gap = 0;
  for (const HardwarePair& p : s.hardware_pairs->pairs) {
    INFO(p.a_id << " / " << p.b_id << " " << p.a_gpu << "/" << p.b_gpu << ": measured " << p.measured_ratio
                << ", predicted " << p.predicted_ratio << " (" << p.job << ")");
    const bool has_gb200 = p.a_gpu == "GB200" || p.b_gpu == "GB200";
    if (!has_gb200) {
      CHECK(std::abs(p.error()) < 0.10);
      ++consistent;
    } else if (p.b_gpu == "B200" &&
               (p.job.find("Nano") != std::string::npos || p.job.find("Qwen3-30B") != std::string::npos)) {
      CHECK(p.error() < -0.10);
      ++grace_gap;
    }
  }
  CHECK(consistent >= 12);
  CHECK(grace_gap >= 4);
}

}  // namespace CLUSTERSIM_TEST_ID
}  // namespace
