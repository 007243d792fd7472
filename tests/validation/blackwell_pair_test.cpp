// One job measured on two Blackwell systems: Megatron-Bridge's Llama 3 8B FP8 recipe on 8 GB200
// (MBRIDGE-016, 31,508 tokens/s per GPU) and on 8 B200 (MBRIDGE-017, 30,624), the same release's
// table (data/validation/published.csv). A listed gap: the model puts GB200 about 16 % ahead where
// the measurements give 3 % (tests/validation/VALIDATION.md, "Stop 53": the per-tile K overhead,
// an estimate, behind MAMF anchors of different K, and attention rows of two cuDNN releases). The
// check is that the predicted ratio stays more than 8 % above the measured one, so that a change
// which closes the gap fails here and moves the pair to a within-10 % check.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "validation/conventions.hpp"
#include "validation/validation.hpp"

namespace {
namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::studies;

namespace {
const std::map<std::string, std::string>& dense_row(const std::string& id) {
  static const CsvTable t = parse_csv(published_csv_text(), "published.csv");
  for (const auto& r : t.rows)
    if (r.at("id") == id) return r;
  FAIL("no row " << id);
  return t.rows.front();
}
}  // namespace

TEST_CASE("Blackwell pair: GB200 over B200 on the same 8B job stays a listed gap", "[validation][blackwell]") {
  const RowOutcome gb200 = validate_row(dense_row("MBRIDGE-016")), b200 = validate_row(dense_row("MBRIDGE-017"));
  REQUIRE(gb200.simulated);
  REQUIRE(b200.simulated);
  REQUIRE(gb200.gpu_type == "GB200");
  REQUIRE(b200.gpu_type == "B200");
  const double measured = gb200.measured_tps_gpu / b200.measured_tps_gpu;
  const double predicted = gb200.predicted_tps_gpu / b200.predicted_tps_gpu;
  INFO("GB200 / B200, Llama 3 8B FP8 on 8 GPUs: measured " << measured << ", predicted " << predicted);
  CHECK(measured == Approx(31508.0 / 30624.0));
  CHECK(predicted / measured > 1.08);
}

}  // namespace CLUSTERSIM_TEST_ID
}  // namespace
