#include "validation/validation_amd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "validation/validation_row.hpp"

namespace clustersim::studies {

using namespace row_cells;

long projection_table_batch(const Row& r) {
  const std::string other = field(r, "other_metrics");
  const std::string key = "published Batch=";
  const auto at = other.find(key);
  if (at == std::string::npos) return 0;
  char* end = nullptr;
  const long v = std::strtol(other.c_str() + at + key.size(), &end, 10);
  return v > 0 ? v : 0;
}

Row with_projection_batch(const Row& published, std::vector<std::string>* assumptions,
                          const ProjectionBatchReading& reading) {
  const long batch = projection_table_batch(published);
  if (!batch || !field(published, "micro_batch").empty() || !field(published, "global_batch").empty() ||
      !field(published, "recompute").empty())
    return published;
  Row r = published;
  const std::string sharding = field(r, "zero_or_fsdp");
  const bool fsdp = contains(sharding, "fsdp") && !contains(sharding, "no fsdp");
  const long split = std::max(1L, integer(r, "tp")) * std::max(1L, integer(r, "pp")) * std::max(1L, integer(r, "cp"));
  const long dp = std::max(1L, integer(r, "num_gpus") / split);
  // "Batch" is per GPU: a global batch of 1, 2 or 4 sequences could not feed dp = 8 or 64
  // ranks, and the 8B figure is the micro-batch of AMD's own 8B benchmark command (MBS=2).
  const int accumulation = fsdp ? reading.accumulation_fsdp : reading.accumulation_non_fsdp;
  r["micro_batch"] = std::to_string(batch);
  r["global_batch"] = std::to_string(batch * dp * accumulation);
  assumptions->push_back(fmt::format(
      "published Batch={} read as the micro-batch; {} micro-batch{} per step ({}), global batch {}", batch, accumulation,
      accumulation == 1 ? "" : "es",
      fsdp ? "ROCm Megatron-LM benchmark command with FSDP=1: MBS=3 BS=24 on 8 GPUs"
           : "ROCm Megatron-LM 8B benchmark commands: MBS=2 BS=128 on 8 GPUs, BS=256 on 16",
      r["global_batch"]));
  // The FSDP2 commands and Primus's 70B configs recompute every layer (RECOMPUTE=1;
  // recompute_granularity: full, recompute_num_layers: 80); the 8B commands set no recompute.
  r["recompute"] = fsdp ? "full" : "none";
  assumptions->push_back(fsdp ? "recompute full (ROCm FSDP=1 benchmark command: RECOMPUTE=1; Primus llama3.1_70B "
                                "configs: recompute_granularity full, all 80 layers)"
                              : "recompute none (the ROCm 8B benchmark commands set no RECOMPUTE)");
  return r;
}

}  // namespace clustersim::studies
