#pragma once
// The same published job run on two GPU types: one source, one software release, one model,
// GPU count, precision, sequence, batch and layout (tp, pp, cp, ep, etp, vpp, micro-batch), only
// the GPU differs. The ratio of the two measurements isolates what the hardware model must get
// right (the GPU and its host CPU), with the model, the layout and the release held fixed; the
// simulator's ratio is checked against it. No constant is fitted on these ratios.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "studies/csv_table.hpp"
#include "validation/validation.hpp"

namespace clustersim::studies {

/// Every pair of simulated, measured rows of `rows` (the outcomes of `table`'s rows) whose jobs
/// match with different GPU types; empty when there is none.
std::optional<HardwarePairs> hardware_pairs(const CsvTable& table, const std::vector<RowOutcome>& rows);

}  // namespace clustersim::studies
