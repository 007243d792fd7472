#pragma once
// Plan search: how many GPUs, and which parallelism plan, train a model on a token budget
// within a deadline. Enumerates the cluster sizes the --auto-parallel grid can form with the
// global batch, screens every plan (validation, memory, a lower bound on the step time), then
// simulates in order of the bound only the plans that could still be the fastest for their
// GPU count or among the cheapest meeting the deadline.
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "studies/sweep_engine.hpp"
#include "units/units.hpp"

namespace clustersim::studies {

struct PlanRequest {
  std::string model;                ///< model preset
  double tokens = 0;                ///< training tokens
  std::vector<std::string> hardware{"h100-sxm"};
  double days = 0;                  ///< deadline
  int seq_len = 4096;
  int global_batch = 0;             ///< sequences per step; 0: default_global_batch(seq_len)
  double cost_per_gpu_hour = 0;
  int max_gpus = 0;                 ///< 0: 8x the 100 %-MFU bound
  int gpu_step = 0;                 ///< 0: GPUs per node of the first hardware
  std::vector<std::string> fixes;   ///< "key=value" fixed in every plan
  std::size_t top = 10;             ///< cheapest plans kept
  int threads = 0;                  ///< 0: every core
  bool keep_all_rows = false;       ///< fill PlanResult::all_rows (for a CSV of every plan)
};

/// Sequences per step when none is given: 4 Mi tokens / seq_len.
int default_global_batch(int seq_len);

/// One simulated plan: the sweep row (cells by PlanResult::header) and its typed figures.
struct PlanCandidate {
  std::uint64_t index = 0;
  std::string hardware;
  int gpus = 0;
  double days = 0;       ///< days to train
  double gpu_hours = 0;
  double mfu = 0;
  units::Seconds step_time;
  units::Bytes peak_memory;
  std::vector<std::string> cells;
};

struct PlanResult {
  double tokens = 0;
  int global_batch = 0;
  std::set<int> sizes;          ///< cluster sizes searched
  int lowest_bound = 0;         ///< fewest GPUs that meet the deadline at 100 % of peak
  std::vector<std::string> header;
  std::vector<PlanCandidate> cheapest;                ///< meeting the deadline, fewest GPU-hours first
  std::vector<PlanCandidate> fastest_per_gpu_count;   ///< by (hardware position, GPUs)
  std::vector<std::pair<std::uint64_t, std::string>> common_rejections;  ///< (count, example)
  SweepStats stats;
  std::vector<std::vector<std::string>> all_rows;     ///< every plan in index order (keep_all_rows)
};

/// Progress of a phase (0: screening every plan, 1: simulating), called on the calling thread.
using PlanProgress = std::function<void(int phase, std::uint64_t done, std::uint64_t total)>;

/// Throws scenarios::ScenarioError for a bad request (message names the option).
PlanResult search_plans(const PlanRequest& request, const PlanProgress& progress = {});

}  // namespace clustersim::studies
