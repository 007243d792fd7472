#pragma once
// Plan search: how many GPUs, and which parallelism plan and global batch, train a model on a
// token budget within a deadline. Per hardware (each with its own GPUs-per-node step), enumerates
// the cluster sizes the --auto-parallel grid can form with the global batch(es), screens every
// plan (validation, memory, a lower bound on the step time), then simulates in order of the
// bound only the plans that could still be the fastest for their GPU count or among the best
// meeting the deadline. Hardware is searched in name order, so the result does not depend on the
// order of PlanRequest::hardware.
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "studies/plan_costs.hpp"
#include "studies/sweep_engine.hpp"
#include "units/units.hpp"

namespace clustersim::studies {

/// What "best" means among the plans meeting the deadline.
enum class PlanRank {
  cost,  ///< total cost (GPU rental + energy) when priced, else GPU-hours
  days,  ///< fewest days to train
  gpus,  ///< fewest GPUs, then fewest days
};
/// "cost", "days" or "gpus"; throws ScenarioError naming --by.
PlanRank parse_plan_rank(const std::string& text);
const char* name(PlanRank r);

/// The schedules `plan` searches unless asked (zb-h1 added with --schedules 1f1b,zb-h1,interleaved).
inline const std::vector<std::string> kPlanDefaultSchedules{"1f1b", "interleaved"};

struct PlanRequest {
  std::string model;                ///< model preset
  double tokens = 0;                ///< training tokens
  std::vector<std::string> hardware{"h100-sxm"};
  double days = 0;                  ///< deadline
  int seq_len = 4096;
  int global_batch = 0;             ///< sequences per step; 0: default_global_batch(seq_len)
  /// hi > 0: search the global batch among candidate_batches(batch_tokens) instead of global_batch.
  double batch_tokens_lo = 0, batch_tokens_hi = 0;
  double cost_per_gpu_hour = 0;     ///< US dollars, every hardware; an entry of prices overrides it
  std::map<std::string, double> prices;  ///< per hardware ("" = all), as parse_gpu_hour_prices gives
  EnergyOptions energy;
  PlanRank rank = PlanRank::cost;
  int max_vpp = 8;                  ///< vpp values searched: vpp_values(layers, pp, max_vpp)
  /// Pipeline schedules searched for pp > 1 (--schedules, parse_schedules). zb-h1 is opt-in here
  /// (the sweep searches it by default): it adds ~35 % plans and ~48 % screening CPU to a
  /// three-hardware 70B question (docs/sweeps.md), and the answer says it was not searched.
  std::vector<std::string> schedules = kPlanDefaultSchedules;
  /// > 0: a plan meets the deadline only at the pessimistic end of its error band at this
  /// confidence (studies/error_band.hpp): days x band.high <= days.
  double confidence = 0;
  int max_gpus = 0;                 ///< 0: 8x the 100 %-MFU bound
  int gpu_step = 0;                 ///< 0: each hardware's allocation unit (a node; a 4-GPU tray of an NVL72 rack)
  std::vector<std::string> fixes;   ///< "key=value" fixed in every plan
  std::size_t top = 10;             ///< best plans kept
  int threads = 0;                  ///< 0: every core
  bool keep_all_rows = false;       ///< fill PlanResult::all_rows (for a CSV of every plan)
  bool exhaustive = false;          ///< simulate every plan that fits (no skipping by the bound; tests)
};

/// The confidence of the error band every plan shows and is ranked by (plans meeting the
/// deadline at the band's high end first): --confidence, else the one `run` prints.
double band_confidence(const PlanRequest& request);

/// Sequences per step when none is given: 4 Mi tokens / seq_len.
int default_global_batch(int seq_len);

/// One simulated plan: the sweep row (cells by PlanResult::header) and its typed figures.
struct PlanCandidate {
  std::uint64_t index = 0;          ///< in its hardware's sweep space
  std::string hardware;
  int gpus = 0;
  int global_batch = 0;             ///< sequences per step
  double days = 0;       ///< days to train
  double gpu_hours = 0;
  double mfu = 0;
  units::Seconds step_time;
  units::Bytes peak_memory;
  PlanCosts costs;
  double days_high = 0;             ///< days at the pessimistic end of the error band (band_confidence)
  std::string band_basis;           ///< the validated class the band comes from
  bool poorly_validated = false;    ///< the band had to widen: few published runs like this plan
  std::vector<std::string> cells;
  /// The cells of other plans meeting the deadline with the same hardware, GPUs, batch, step time,
  /// peak memory and cost: they differ only in settings with no effect (ZeRO-1 vs ZeRO-2 twins),
  /// so they are listed with this one instead of taking places of their own. Best first.
  std::vector<std::vector<std::string>> equivalents;
};

/// Whether `x` and `y` predict the same (hardware, GPUs, batch, step time, peak memory, cost and
/// days at the error band's high end).
bool same_figures(const PlanCandidate& x, const PlanCandidate& y);

struct PlanResult {
  double tokens = 0;
  int global_batch = 0;         ///< the global batch, or the smallest searched
  std::vector<int> batches;     ///< global batches searched (one unless a batch range)
  std::vector<std::string> hardware;                  ///< searched, in name order
  std::map<std::string, std::set<int>> sizes_by_hardware;
  std::set<int> sizes;          ///< cluster sizes searched, over all hardware
  std::vector<std::string> notes;  ///< why a hardware was not searched (no cluster size)
  int lowest_bound = 0;         ///< fewest GPUs that meet the deadline at 100 % of peak
  /// Where no plan met the deadline under the default ceiling (8x lowest_bound) while more GPUs
  /// still gained, the search went on up to this many GPUs; 0 when it did not.
  int widened_to = 0;
  bool priced = false;          ///< a GPU-hour price was given: costs rank, else GPU-hours
  std::uint64_t unformable = 0; ///< (size, batch, plan) combinations whose dp·micro_batch does not divide the batch
  std::vector<std::string> header;  ///< the sweep's columns, then energy_mwh, energy_cost_usd, total_cost_usd
  std::vector<PlanCandidate> cheapest;                ///< meeting the deadline, best first by PlanRequest::rank
  std::vector<PlanCandidate> fastest_per_gpu_count;   ///< by (hardware name, GPUs)
  std::vector<std::pair<std::uint64_t, std::string>> common_rejections;  ///< (count, example)
  SweepStats stats;
  std::vector<std::vector<std::string>> all_rows;     ///< every plan, by hardware name then index (keep_all_rows)
};

/// Progress of a phase (0: screening every plan, 1: simulating), called on the calling thread.
using PlanProgress = std::function<void(int phase, std::uint64_t done, std::uint64_t total)>;

/// When the global batch is the binding constraint, a line that says so and suggests
/// --batch-tokens; else "". It binds when the plan that matters (the best meeting the deadline,
/// or the fastest found when none meets it) runs dp x micro_batch = its whole global batch: no
/// gradient accumulation is left, so more data-parallel GPUs need a bigger batch.
std::string batch_binding_note(const PlanRequest& request, const PlanResult& result);

/// Throws scenarios::ScenarioError for a bad request (message names the option).
PlanResult search_plans(const PlanRequest& request, const PlanProgress& progress = {});

}  // namespace clustersim::studies
