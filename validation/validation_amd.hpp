#pragma once
// The AMD rows of docs/reference/validation/published_newhw.csv (a copy: data/validation/published_amd.csv)
// come from the Primus projection blog's MI325X table, which publishes one "Batch" per row and
// no global batch, no gradient accumulation and no recompute setting. This fills those cells
// from what AMD's own benchmark commands state, each with its source, before the row is
// converted like any other (validation/validation.cpp).
#include <map>
#include <string>
#include <vector>

namespace clustersim::studies {

/// The reading of the projection table's "Batch" (other_metrics "published Batch=N").
struct ProjectionBatchReading {
  int accumulation_non_fsdp = 8;  ///< micro-batches per step, Megatron DDP rows
  int accumulation_fsdp = 1;      ///< micro-batches per step, FSDP2 rows
};

/// The documented reading: the ROCm Megatron-LM benchmark commands' gradient accumulation.
inline constexpr ProjectionBatchReading kDocumentedProjectionReading{8, 1};

/// The per-GPU "Batch" such a row publishes (other_metrics "published Batch=N"), 0 when none.
long projection_table_batch(const std::map<std::string, std::string>& row);

/// The row with micro_batch, global_batch and recompute filled where it publishes only the
/// projection table's "Batch" and leaves all three blank (other rows come back unchanged);
/// each filled cell's source is appended to `assumptions`.
std::map<std::string, std::string> with_projection_batch(const std::map<std::string, std::string>& row,
                                                         std::vector<std::string>* assumptions,
                                                         const ProjectionBatchReading& reading = kDocumentedProjectionReading);

}  // namespace clustersim::studies
