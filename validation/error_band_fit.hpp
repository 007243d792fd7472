#pragma once
// Building the error-band table (studies/error_bands.csv, read by studies/error_band.hpp) from the
// published runs: every headline row's leave-one-family-out residual, grouped by class at each
// widening level. Developers run it through `clustersim calibrate --write-error-bands`; a test
// regenerates and compares it.
#include <string>
#include <vector>

#include "studies/csv_table.hpp"
#include "studies/error_band.hpp"
#include "validation/validation.hpp"

namespace clustersim::studies {

/// The text of studies/error_bands.csv for a published-runs table: every headline row's
/// leave-one-family-out residual, grouped by class at each widening level. Slow (it calibrates).
std::string error_bands_csv(const CsvTable& published);

/// The same from `held_out`, the table's leave-one-family-out rows already computed
/// (held_out_rows(), or ValidationSummary::held_out_rows after add_out_of_sample()).
std::string error_bands_csv(const CsvTable& published, const std::vector<RowOutcome>& held_out);

}  // namespace clustersim::studies
