#pragma once
// Evaluates the configurations of a SweepSpace on a pool of threads: each configuration is
// loaded (validated) from the base scenario plus its overrides, pruned if it cannot fit in
// memory, else simulated. Results reach the caller in index order whatever the thread count.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/scenario_template.hpp"
#include "scenarios/simulate.hpp"
#include "studies/sweep_space.hpp"
#include "studies/sweep_table.hpp"

namespace clustersim::studies {

enum class Status { ok, out_of_memory, invalid, error, pruned };
const char* name(Status s);

/// One evaluated configuration, as the cells of one CSV row (see sweep_header()).
struct Row {
  std::uint64_t index = 0;
  Status status = Status::invalid;
  std::vector<std::string> cells;
  std::optional<RowFigures> figures;  ///< the simulated figures, typed (status ok only)
  std::string json;  ///< one JSON line, when SweepOptions::jsonl
  std::uint64_t events = 0;
};

struct SweepOptions {
  int threads = 0;                  ///< 0: every core
  Shard shard;
  double cost_per_gpu_hour = 0;     ///< 0: no cost column values
  bool jsonl = false;               ///< also encode rows as JSON lines
  /// Called from the calling thread after each batch with (done, total) in this shard.
  std::function<void(std::uint64_t, std::uint64_t)> on_progress;
};

/// index, the space's columns, status, reason, every metric of `run --json`, gpu_hours, cost_usd.
std::vector<std::string> sweep_header(const SweepSpace& space);

/// Evaluates configuration `config` of the sweep; never throws for a bad configuration
/// (status invalid, with the loader's reason).
Row evaluate(const scenarios::ScenarioTemplate& base, const SweepSpace& space, const Config& config,
             const SweepOptions& options);
/// The same for `config` already loaded as `sc` (base.instantiate(config.overrides)).
Row evaluate(const scenarios::Scenario& sc, const SweepSpace& space, const Config& config, const SweepOptions& options);
/// The row of a configuration that was not simulated (`report` null) or was (`report` set).
Row make_row(const SweepSpace& space, const Config& config, const SweepOptions& options, Status status,
             const std::string& reason, const scenarios::Report* report);

/// A lower bound on the simulated step time: models::step_kernel_floor_s on the scenario's
/// kernel costs. Used to skip simulations, never as a result.
double step_time_lower_bound_s(const scenarios::Scenario& sc);

/// Threads to use for `requested` (0: every core).
int resolve_threads(int requested);
/// One copy of `base` per worker: yaml-cpp trees are not thread-safe.
std::vector<scenarios::ScenarioTemplate> worker_templates(const scenarios::ScenarioTemplate& base, int threads);
/// Runs work(worker, j) for every j in [0, n) on up to `threads` threads; worker < threads.
void parallel_for(std::uint64_t n, int threads, const std::function<void(int, std::uint64_t)>& work);

struct SweepStats {
  std::uint64_t evaluated = 0, ok = 0, out_of_memory = 0, invalid = 0, errors = 0, pruned = 0;
  std::uint64_t events = 0;  ///< simulated events over all ok rows
  /// ok rows whose step another row's simulation gave (StepMemo: ZeRO-1/ZeRO-2 pairs)
  std::uint64_t reused_steps = 0;
  double wall_s = 0;
  int threads = 0;
};

/// Adds one row to the counts.
void count(const Row& r, SweepStats* stats);

/// Evaluates this shard's configurations, calling `sink` in index order on the calling thread.
SweepStats run_sweep(const scenarios::ScenarioTemplate& base, const SweepSpace& space, const SweepOptions& options,
                     const std::function<void(const Row&)>& sink);

}  // namespace clustersim::studies
