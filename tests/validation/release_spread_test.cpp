// The release-to-release spread of republished MoE jobs (validation/release_spread.hpp), on a small
// table whose answer is worked out by hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "validation/conventions.hpp"
#include "validation/release_spread.hpp"
#include "validation/validation_moe.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::studies;

namespace {

const char* kHeader = "id,model_name,gpu_type,num_gpus,precision,seq_len,global_batch,tp,pp,ep,cp,vpp,micro_batch,num_experts,framework\n";

std::string row(const std::string& id, const std::string& release, const std::string& micro_batch = "1") {
  return id + ",Toy-MoE,B200,8,mxfp8,4096,512,1,1,8,1,,"+ micro_batch + ",8,Megatron-Bridge / NeMo " + release + " container\n";
}

RowOutcome outcome(const std::string& id, double measured, double error) {
  RowOutcome o;
  o.id = id, o.measured_tps_gpu = measured, o.simulated = true, o.error = error;
  return o;
}

}  // namespace

TEST_CASE("release spread: one job and layout over three releases", "[validation][moe]") {
  // 100, 100 and 200 tokens/s in 26.02, 26.04 and 26.06: fastest over slowest 2.0; the geometric mean
  // 100·2^(1/3) = 125.99 misses the rows by 26.0 %, 26.0 % and 37.0 %. The fourth row has another
  // micro-batch (a layout of its own, one release: not counted); the fifth is not simulated.
  const CsvTable t = parse_csv(std::string(kHeader) + row("MOE-X-001", "26.02") + row("MOE-X-002", "26.04") +
                                   row("MOE-X-003", "26.06") + row("MOE-X-004", "26.06", "2") + row("MOE-X-005", "26.08"),
                               "toy");
  RowOutcome unsimulated = outcome("MOE-X-005", 400, 0);
  unsimulated.simulated = false;
  const std::vector<RowOutcome> rows = {outcome("MOE-X-001", 100, 0.10), outcome("MOE-X-002", 100, -0.30),
                                        outcome("MOE-X-003", 200, 0.20), outcome("MOE-X-004", 300, 0.90), unsimulated};
  const auto s = release_spread(released_rows(t), rows);
  REQUIRE(s);
  CHECK(s->configurations == 1);
  CHECK(s->rows == 3);
  CHECK(s->median_ratio == Approx(2.0));
  CHECK(s->over_20_percent == 1);
  CHECK(s->widest_ratio == Approx(2.0));
  CHECK(s->widest_configuration == "Toy-MoE, 8 x B200, mxfp8, seq 4096, batch 512, tp1 pp1 ep8 cp1 vpp mb1");
  const double gm = 100 * std::cbrt(2.0);
  CHECK(s->release_blind_mape == Approx((2 * (gm / 100 - 1) + (1 - gm / 200)) / 3));
  CHECK(s->simulator_mape == Approx((0.10 + 0.30 + 0.20) / 3));
}

TEST_CASE("release spread: nothing republished gives no figure", "[validation][moe]") {
  const CsvTable t = parse_csv(std::string(kHeader) + row("MOE-X-001", "26.02") + row("MOE-X-002", "26.04", "2"), "toy");
  CHECK_FALSE(release_spread(released_rows(t), {outcome("MOE-X-001", 100, 0), outcome("MOE-X-002", 120, 0)}));
}

TEST_CASE("release spread of the shipped MoE table", "[validation][moe]") {
  // Not re-simulated here: the published table alone fixes the grouping, so every row is given
  // as simulated with error 0 and only the measured spread is checked. Megatron-Bridge republished
  // 45 or more (job, layout) pairs; at least one moved by over 1.9x between releases (Qwen3-30B-A3B
  // on 16 H100, FP8, tp1 pp2 ep8 vpp24 mb2: 10,494 in 25.09, 5,275 in 25.11).
  const CsvTable t = parse_csv(published_moe_csv_text(), "published_moe.csv");
  std::vector<RowOutcome> rows;
  for (const auto& r : t.rows) {
    const std::string measured = r.at("measured_tps_gpu");
    if (!measured.empty()) rows.push_back(outcome(r.at("id"), std::stod(measured), 0));
  }
  const auto s = release_spread(released_rows(t), rows);
  REQUIRE(s);
  CHECK(s->configurations >= 45);
  CHECK(s->widest_ratio > 1.9);
  CHECK(s->simulator_mape == 0);
}

}}  // namespace CLUSTERSIM_TEST_ID
