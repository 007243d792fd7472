// Regression guard on the accuracy against the published runs (issues #5 and #13 item 10). The
// guarded figure is the OUT-OF-SAMPLE one: every family predicted with the fitted profile
// constants refitted without it (leave one family out). The in-sample figure is guarded too,
// second. Each bar is the figure measured when this test was last updated plus a small margin:
// a change that makes the predictions worse, or silently drops rows, fails here. The issue's
// targets (out of sample <= 8 %, in sample <= 7 %) are not met yet: tests/validation/VALIDATION.md
// states the gap and its reasons.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "validation/calibrate.hpp"
#include "validation/error_band_fit.hpp"
#include "validation/validation.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::studies;

namespace {
// measured 0.1301 on 288 rows on 2026-12-02 (rows run their published FP8 recipe, NVFP4 row MBRIDGE-009
// added; was 0.1298 on 287, 0.1304, 0.136 before FA2)
// 0.1337 on 2026-12-06 once llm-foundry's rows run their fused cross-entropy (family_conventions.csv):
// its small models' long-sequence rows, already too fast from the unmeasured Triton attention
// (VALIDATION.md), lose the over-costed FP32 loss that offset part of it.
constexpr double kMaxOutOfSampleMape = 0.135;
constexpr double kMaxHeadlineMape = 0.131;  // measured 0.1275 on 2026-12-05 once the held-out split by source and date
                                            // left the fit (Blackwell takes the global constant); 0.1243 before;
                                            // 0.1299 on 2026-12-06 with llm-foundry's fused cross-entropy
constexpr int kMinHeadlineRows = 288;

// Families whose out-of-sample MAPE is above the 15 % per-family bar, each with its
// physics reason (VALIDATION.md "Known gaps"). A family listed here that comes under the bar
// fails too, so the list cannot go stale.
const std::map<std::string, const char*> kKnownGaps = {
    {"IBMFSDP",
     "eager PyTorch FSDP on H100 predicted up to 36 % too fast (FA2, whole-block selective AC): the "
     "compile/no-compile gap is larger than "
     "the modelled host launch cost (7B kernels outlast their launches), so its cause (per-module Python "
     "and FSDP2 hook overhead) is not modelled; the 7B/13B rows fit without recompute in the memory model "
     "though the source used some, and the A100 rows are predicted 10-24 % too slow"},
    {"KORTH",
     "Korthikanti et al. 2022 (A100, 22B-1T models, TP 8 with selective/full recompute): predicted 15-21 % "
     "too slow since the kernel models replaced the fitted GEMM/attention pair; the A100 scalar is set by "
     "108 mostly small-model LLMFOUNDRY rows and undershoots the largest GEMMs (hidden >= 12k), the "
     "'large GEMMs predicted too slow' pattern of issue #13"},
    {"MEG-SC21T2",
     "DeepSpeed ZeRO-3 rows of GPT-3 175B / 530B, pure data parallel: predicted 2-4x too fast; "
     "DeepSpeed's parameter-fetch stalls are not modelled"},
};

std::vector<std::string> data_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty() && (l[0] != '#' || l.rfind("# Check", 0) == 0)) out.push_back(l);  // data and the coverage line
  return out;
}

// studies/error_bands.csv regenerated from these residuals against the committed copy: a change to
// the model, a profile or the runs that moves a residual fails here until
// `clustersim calibrate --write-error-bands studies/error_bands.csv` is rerun.
void check_error_bands_table(const CsvTable& table, const ValidationSummary& s) {
  const auto fresh = data_lines(error_bands_csv(table, s.held_out_rows));
  const auto committed = data_lines(error_bands_csv_text());
  REQUIRE(fresh.size() == committed.size());
  for (std::size_t i = 0; i < fresh.size(); ++i) {
    INFO("error-band row " << i << "\n  regenerated: " << fresh[i] << "\n  committed:   " << committed[i]);
    if (i == 0 || fresh[i][0] == '#' || fresh[i].rfind("hardware_class", 0) == 0) {
      REQUIRE(fresh[i] == committed[i]);
      continue;
    }
    // Keys and row counts exactly; the statistics to the last printed digit (±1e-5: rounding).
    const auto cut = [](const std::string& l) { return l.substr(0, l.rfind(',', l.rfind(',') - 1)); };
    REQUIRE(cut(fresh[i]) == cut(committed[i]));
    const auto nums = [](const std::string& l) {
      const auto b = l.rfind(','), a = l.rfind(',', b - 1);
      return std::pair<double, double>(std::stod(l.substr(a + 1, b - a - 1)), std::stod(l.substr(b + 1)));
    };
    CHECK(nums(fresh[i]).first == Approx(nums(committed[i]).first).margin(2e-5));
    CHECK(nums(fresh[i]).second == Approx(nums(committed[i]).second).margin(2e-5));
  }
}
}  // namespace

// One test case for the overall and per-family guards and the error-band table: each needs the
// leave-one-family-out pass, which refits every family's constants, the suite's most expensive
// computation (about 3 min under ASan), so it runs once.
TEST_CASE(
    "published runs: out-of-sample (leave-one-family-out) MAPE <= 13.5%, in sample <= 13.1%, every family <= 15% or a "
    "listed known gap, error-band table current",
    "[validation][error_band]") {
  const CsvTable table = read_csv_file(CLUSTERSIM_SOURCE_DIR "/data/validation/published.csv");
  ValidationSummary s = validate_table(table);
  add_out_of_sample(table, "", &s);
  REQUIRE(s.rows.size() == 346);
  REQUIRE(s.overall.held_out.has_value());
  INFO("out of sample: MAPE " << 100 * s.overall.held_out->mape << "% on " << s.overall.held_out->count
                              << " rows; in sample: " << 100 * s.overall.headline.mape << "% on "
                              << s.overall.headline.count << " rows, worst " << 100 * s.overall.headline.worst << "% ("
                              << s.overall.headline.worst_id << ")");
  CHECK(s.overall.headline.count >= kMinHeadlineRows);
  CHECK(s.overall.held_out->count == s.overall.headline.count);  // every headline row predicted out of sample
  CHECK(s.overall.held_out->mape <= kMaxOutOfSampleMape);
  CHECK(s.overall.headline.mape <= kMaxHeadlineMape);
  // Every row is accounted for: simulated, or listed with a reason.
  for (const auto& r : s.rows) {
    INFO(r.id);
    CHECK((r.simulated || !r.reason.empty()));
  }
  for (const auto& f : s.families) {
    if (!f.held_out || f.held_out->count == 0) continue;
    const auto gap = kKnownGaps.find(f.family);
    INFO(f.family << ": out-of-sample MAPE " << 100 * f.held_out->mape << "% on " << f.held_out->count << " rows"
                  << (gap != kKnownGaps.end() ? std::string(" (known gap: ") + gap->second + ")" : std::string()));
    if (gap == kKnownGaps.end()) CHECK(f.held_out->mape <= 0.15);
    else CHECK(f.held_out->mape > 0.15);  // fixed: remove it from kKnownGaps and VALIDATION.md
  }
  check_error_bands_table(table, s);
}

TEST_CASE("clustersim validate prints the table and writes the SVG plot", "[validation][cli]") {
  const std::string svg = "validate_test_plot.svg";
  const std::string out = "validate_test_out.txt";
  const std::string cmd = std::string("\"") + CLUSTERSIM_BINARY + "\" validate --source MBRIDGE --plot " + svg + " > " + out;
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ifstream t(out), p(svg);
  std::stringstream text, plot;
  text << t.rdbuf();
  plot << p.rdbuf();
  CHECK_THAT(text.str(), Catch::Contains("MBRIDGE-016"));
  CHECK_THAT(text.str(), Catch::Contains("overall"));
  CHECK_THAT(text.str(), Catch::Contains("NOT SIMULATED"));
  CHECK_THAT(plot.str(), Catch::StartsWith("<svg"));
  CHECK_THAT(plot.str(), Catch::Contains("stroke-dasharray"));  // the y = x line
  const std::string bad = std::string("\"") + CLUSTERSIM_BINARY + "\" validate --source NO-SUCH-FAMILY > /dev/null 2>&1";
  CHECK(WEXITSTATUS(std::system(bad.c_str())) == 2);
  std::remove(svg.c_str());
  std::remove(out.c_str());
}

}}  // namespace CLUSTERSIM_TEST_ID
