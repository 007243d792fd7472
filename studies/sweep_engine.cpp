#include "studies/sweep_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <thread>

#include "models/layer_ops.hpp"
#include "models/memory.hpp"
#include "models/step_bound.hpp"
#include "scenarios/error.hpp"
#include "scenarios/simulate.hpp"
#include "studies/memory_advice.hpp"
#include "studies/metrics.hpp"
#include "studies/step_memo.hpp"
#include "studies/sweep_table.hpp"

namespace clustersim::studies {

const char* name(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::out_of_memory: return "out_of_memory";
    case Status::invalid: return "invalid";
    case Status::error: return "error";
    case Status::pruned: return "pruned";
  }
  return "?";
}

std::vector<std::string> sweep_header(const SweepSpace& space) {
  std::vector<std::string> h{"index"};
  h.insert(h.end(), space.columns().begin(), space.columns().end());
  h.push_back("status");
  h.push_back("reason");
  h.insert(h.end(), metric_columns().begin(), metric_columns().end());
  h.push_back("gpu_hours");
  h.push_back("cost_usd");
  return h;
}

namespace {

// A configuration's row from its loaded scenario: out of memory, or simulated (or, with `memo`,
// its step taken from the configuration whose step it is).
Row evaluate_loaded(const scenarios::Scenario& sc, const SweepSpace& space, const Config& config,
                    const SweepOptions& options, StepMemo* memo) {
  // Memory is cheap to estimate; plans that cannot fit are not simulated.
  if (auto reason = memory_prescreen(sc)) return make_row(space, config, options, Status::out_of_memory, *reason, nullptr);
  const std::string key = memo ? StepMemo::key(space, config, sc) : std::string();
  if (key.empty()) {
    const scenarios::Report r = scenarios::simulate(sc);
    return make_row(space, config, options, Status::ok, "", &r);
  }
  if (const auto step = memo->take_or_hold(key)) {
    const scenarios::Report r = scenarios::simulate(sc, *step);
    Row row = make_row(space, config, options, Status::ok, "", &r);
    row.events = 0;  // not simulated again
    return row;
  }
  try {
    const scenarios::Report r = scenarios::simulate(sc);
    memo->put(key, r.step);
    return make_row(space, config, options, Status::ok, "", &r);
  } catch (...) {
    memo->release(key);
    throw;
  }
}

template <class Load>
Row evaluate_guarded(const SweepSpace& space, const Config& config, const SweepOptions& options, Load load,
                     StepMemo* memo = nullptr) {
  try {
    return evaluate_loaded(load(), space, config, options, memo);
  } catch (const scenarios::ScenarioError& e) {
    return make_row(space, config, options, Status::invalid, e.what(), nullptr);
  } catch (const std::exception& e) {
    return make_row(space, config, options, Status::error, fmt::format("internal error: {}", e.what()), nullptr);
  }
}

}  // namespace

Row evaluate(const scenarios::ScenarioTemplate& base, const SweepSpace& space, const Config& config,
             const SweepOptions& options) {
  return evaluate_guarded(space, config, options, [&] { return base.instantiate(config.overrides); });
}

Row evaluate(const scenarios::Scenario& sc, const SweepSpace& space, const Config& config, const SweepOptions& options) {
  return evaluate_guarded(space, config, options, [&]() -> const scenarios::Scenario& { return sc; });
}

Row make_row(const SweepSpace& space, const Config& config, const SweepOptions& options, Status status,
             const std::string& reason, const scenarios::Report* report) {
  Row row;
  row.index = config.index;
  row.status = status;
  std::vector<Metric> metrics;
  double gpu_hours = 0;
  if (report) {
    metrics = report_metrics(*report);
    gpu_hours = report->days_to_train * 24.0 * report->num_gpus;
    row.events = report->step.events;
    if (status == Status::ok)
      row.figures = RowFigures{report->mfu, report->step_time_s, report->days_to_train, gpu_hours, report->memory.total_bytes};
  }
  const std::string hours = gpu_hours > 0 ? fmt::format("{:.10g}", gpu_hours) : "";
  const std::string cost =
      gpu_hours > 0 && options.cost_per_gpu_hour > 0 ? fmt::format("{:.10g}", gpu_hours * options.cost_per_gpu_hour) : "";
  row.cells.reserve(config.values.size() + metric_columns().size() + 5);
  row.cells.push_back(std::to_string(config.index));
  row.cells.insert(row.cells.end(), config.values.begin(), config.values.end());
  row.cells.push_back(name(row.status));
  row.cells.push_back(reason);
  if (report) {
    auto cells = metric_cells(metrics);
    row.cells.insert(row.cells.end(), std::make_move_iterator(cells.begin()), std::make_move_iterator(cells.end()));
  } else {
    row.cells.resize(row.cells.size() + metric_columns().size());
  }
  row.cells.push_back(hours);
  row.cells.push_back(cost);
  if (options.jsonl) {
    Json values = Json::object();
    for (std::size_t i = 0; i < config.values.size(); ++i)
      values[space.columns()[i]] = json_cell_value(config.values[i]);
    const Json j = {{"index", config.index},
                    {"config", values},
                    {"status", name(row.status)},
                    {"reason", reason.empty() ? Json(nullptr) : Json(reason)},
                    {"gpu_hours", json_cell_value(hours)},
                    {"cost_usd", json_cell_value(cost)},
                    {"result", report ? metrics_object(metrics) : Json(nullptr)}};
    row.json = json_dump(j, false);
  }
  return row;
}

double step_time_lower_bound_s(const scenarios::Scenario& sc) {
  const auto costs = models::step_costs(sc.model, sc.training, sc.parallel, sc.gpu);
  return models::step_kernel_floor_s(sc.model, sc.training, sc.parallel, costs);
}

int resolve_threads(int requested) {
  return requested > 0 ? requested : int(std::max(1u, std::thread::hardware_concurrency()));
}

std::vector<scenarios::ScenarioTemplate> worker_templates(const scenarios::ScenarioTemplate& base, int threads) {
  std::vector<scenarios::ScenarioTemplate> bases;
  bases.reserve(std::size_t(std::max(1, threads)));
  bases.push_back(base);
  for (int t = 1; t < threads; ++t) bases.push_back(bases.front());
  return bases;
}

void parallel_for(std::uint64_t n, int threads, const std::function<void(int, std::uint64_t)>& work) {
  std::atomic<std::uint64_t> next{0};
  auto loop = [&](int w) {
    for (std::uint64_t j; (j = next.fetch_add(1)) < n;) work(w, j);
  };
  const int workers = int(std::min<std::uint64_t>(std::uint64_t(std::max(1, threads)), n));
  std::vector<std::thread> pool;
  for (int w = 1; w < workers; ++w) pool.emplace_back(loop, w);
  loop(0);
  for (auto& t : pool) t.join();
}

SweepStats run_sweep(const scenarios::ScenarioTemplate& base, const SweepSpace& space, const SweepOptions& options,
                     const std::function<void(const Row&)>& sink) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  SweepStats stats;
  stats.threads = resolve_threads(options.threads);
  const std::uint64_t total = options.shard.size(space.size());
  const auto bases = worker_templates(base, stats.threads);
  // Batches keep memory bounded and output ordered; their size adapts to ~0.25 s of work so
  // that progress stays live whether a configuration takes microseconds or seconds. (Helper
  // threads are started per batch; the presets they parse on first use cost ~1 ms per batch.)
  std::uint64_t done = 0, batch = std::uint64_t(stats.threads) * 4;
  std::vector<Row> rows;
  StepMemo memo;
  while (done < total) {
    const std::uint64_t n = std::min(batch, total - done);
    rows.assign(std::size_t(n), Row{});
    const auto batch_start = Clock::now();
    parallel_for(n, stats.threads, [&](int w, std::uint64_t j) {
      const Config config = space.at(options.shard.global(done + j));
      rows[std::size_t(j)] = evaluate_guarded(
          space, config, options, [&] { return bases[std::size_t(w)].instantiate(config.overrides); }, &memo);
    });
    const double batch_s = std::chrono::duration<double>(Clock::now() - batch_start).count();
    for (const Row& r : rows) {
      sink(r);
      count(r, &stats);
    }
    done += n;
    if (options.on_progress) options.on_progress(done, total);
    const double per_config_s = std::max(batch_s, 1e-6) / double(n);
    batch = std::clamp<std::uint64_t>(std::uint64_t(0.25 / per_config_s), std::uint64_t(stats.threads), 1u << 14);
  }
  stats.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  stats.reused_steps = memo.reused();
  return stats;
}

void count(const Row& r, SweepStats* stats) {
  ++stats->evaluated;
  stats->events += r.events;
  switch (r.status) {
    case Status::ok: ++stats->ok; break;
    case Status::out_of_memory: ++stats->out_of_memory; break;
    case Status::invalid: ++stats->invalid; break;
    case Status::error: ++stats->errors; break;
    case Status::pruned: ++stats->pruned; break;
  }
}

}  // namespace clustersim::studies
