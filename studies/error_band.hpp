#pragma once
// An error band for every prediction (issue 16, "honest uncertainty"): how far the measured step
// time of comparable published runs fell from clustersim's out-of-sample prediction. The residuals
// are leave-one-family-out (each published row predicted with the profile constants fitted
// without its source family, validation/calibrate.hpp) and summarized per class of configuration in
// studies/error_bands.csv, which `clustersim calibrate --write-error-bands` regenerates
// (validation/error_band_fit.hpp) and a test
// keeps in step with the model. The table is compiled in; looking a band up costs no simulation.
#include <array>
#include <string>
#include <vector>

#include "scenarios/scenario.hpp"

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
  bool operator==(const BandClass&) const = default;
};
BandClass band_class(const scenarios::Scenario& s);

/// One line of the table: a class at one widening level ("*" = any) and its residual statistics,
/// log(measured step time / predicted step time) over its rows. validation/error_band_fit.hpp
/// builds the table from the published runs.
struct BandRow {
  std::string hardware, style, scale;
  int rows = 0;
  int families = 0;            ///< source families among the rows
  double mean = 0;             ///< mean of the families' mean log ratios
  double between = 0;          ///< sd of the families' means (0 with one family)
  double within = 0;           ///< pooled sd of rows about their family's mean
};

/// The keys of `c` at widening `level`: level 0 is the narrowest class; each level replaces one
/// more key by "*" (an MoE class keeps its style: its widest class is every MoE run, never the
/// dense ones).
std::array<std::string, 3> keys_at(const BandClass& c, int level);

/// The band for class `c` from `rows` (the committed table, or one built without a family).
ErrorBand band_from(const std::vector<BandRow>& rows, const BandClass& c, double confidence);

/// The committed table, compiled in (generated source from studies/error_bands.csv).
const char* error_bands_csv_text();

}  // namespace clustersim::studies
