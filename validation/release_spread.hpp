#pragma once
// How much one published configuration's measured throughput moves from release to release
// (Megatron-Bridge republishes the same MoE jobs with every container): the part of a
// prediction's error that comes from the software release rather than from the configuration.
#include <optional>
#include <string>
#include <vector>

#include "validation/validation.hpp"
#include "validation/validation_moe.hpp"

namespace clustersim::studies {

/// Empty when no configuration of `released` (released_rows of the table) has two releases among
/// `rows`' simulated outcomes.
std::optional<ReleaseSpread> release_spread(const std::vector<ReleasedRow>& released, const std::vector<RowOutcome>& rows);

}  // namespace clustersim::studies
