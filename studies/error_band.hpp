#pragma once
// An error band for every prediction (issue 16, "honest uncertainty"): how far the measured step
// time of comparable published runs fell from clustersim's out-of-sample prediction. The residuals
// are leave-one-family-out (each published row predicted with the profile constants fitted
// without its source family, studies/calibrate.hpp) and summarized per class of configuration in
// studies/error_bands.csv, which `clustersim calibrate --write-error-bands` regenerates and a test
// keeps in step with the model. The table is compiled in; looking a band up costs no simulation.
#include <string>
#include <vector>

#include "scenarios/scenario.hpp"
#include "studies/csv_table.hpp"
#include "studies/validation.hpp"

namespace clustersim::studies {

/// Multiplicative factors on the predicted step time (and days) at the requested confidence:
/// the measured step time is expected in [low × predicted, high × predicted]. Throughput and
/// MFU scale by 1/high .. 1/low.
struct ErrorBand {
  double low = 1, high = 1;
  int rows = 0;       ///< published rows behind the band
  /// The class they were taken from, e.g. "H100-class, pipeline, 15B-150B"; when widened, it adds how
  /// many rows the exact class has ("; only 6 published rows are A100-class, ZeRO-3/FSDP, over 150B").
  std::string basis;
  double confidence = 0;
};

/// The band for `s` at `confidence` (0 < confidence < 1; 0.68 ≈ one standard deviation): from the
/// narrowest class of the table (hardware class, parallelism style, model scale; then hardware
/// class and style; then hardware class; then every row) holding at least kMinBandRows rows from
/// kMinBandFamilies source families; a prediction interval for a run from a new source.
/// Throws scenarios::ScenarioError for a confidence outside (0, 1).
ErrorBand error_band(const scenarios::Scenario& s, double confidence);

/// The confidence `run` prints and `--json` reports.
inline constexpr double kDefaultBandConfidence = 0.68;
/// Fewer rows than this in a class and the band widens to the next broader class.
inline constexpr int kMinBandRows = 8;
/// ... or fewer source families than this (rows of one source share their error).
inline constexpr int kMinBandFamilies = 3;
/// The parallelism-style key of Mixture-of-Experts runs (banded by the MoE validation rows only).
inline constexpr const char* kMoeStyle = "MoE";

/// The class keys of a configuration (what the table is indexed by).
struct BandClass {
  std::string hardware;  ///< by dense BF16 peak: "A100-class", "H100-class", "B200-class"
  std::string style;     ///< "ZeRO-3/FSDP", "pipeline", "tensor parallel", "data parallel"
  std::string scale;     ///< total parameters: "under 15B", "15B-150B", "over 150B"
};
BandClass band_class(const scenarios::Scenario& s);

/// The text of studies/error_bands.csv for a published-runs table: every headline row's
/// leave-one-family-out residual, grouped by class at each widening level. Slow (it calibrates).
std::string error_bands_csv(const CsvTable& published);

/// The same from `held_out`, the table's leave-one-family-out rows already computed
/// (held_out_rows(), or ValidationSummary::held_out_rows after add_out_of_sample()).
std::string error_bands_csv(const CsvTable& published, const std::vector<RowOutcome>& held_out);

/// The committed table, compiled in (generated source from studies/error_bands.csv).
const char* error_bands_csv_text();

}  // namespace clustersim::studies
