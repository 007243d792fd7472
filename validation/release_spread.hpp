#pragma once
// How much one published configuration's measured throughput moves from release to release
// (Megatron-Bridge republishes the same MoE jobs with every container): the part of a
// prediction's error that comes from the software release rather than from the configuration.
#include <optional>
#include <string>
#include <vector>

#include "studies/csv_table.hpp"
#include "validation/validation.hpp"

namespace clustersim::studies {

/// Empty when no configuration of `table` has two releases among `rows`' simulated outcomes.
std::optional<ReleaseSpread> release_spread(const CsvTable& table, const std::vector<RowOutcome>& rows);

}  // namespace clustersim::studies
