#include "studies/plan_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "models/flops.hpp"
#include "models/memory.hpp"
#include "scenarios/error.hpp"
#include "scenarios/scenario_template.hpp"
#include "studies/memory_advice.hpp"
#include "studies/sweep_table.hpp"

namespace clustersim::studies {
namespace {

using scenarios::ScenarioError;

// Default tokens per optimizer step when --global-batch is not given: 4 Mi tokens, the batch of
// Llama 2 (Touvron et al. 2023, §2.2) and close to GPT-3 175B's 3.2 M (Brown et al. 2020, Table 2.1).
constexpr double kDefaultTokensPerStep = 4194304;

std::string base_yaml(const PlanRequest& a, const std::string& hardware, int gpus, int global_batch, double tokens) {
  return fmt::format(
      "name: plan {} on {}\nmodel: {}\nhardware: {}\ncluster:\n  gpus: {}\n"
      "training:\n  seq_len: {}\n  global_batch: {}\n  tokens: {:.17g}\n",
      a.model, hardware, a.model, hardware, gpus, a.seq_len, global_batch, tokens);
}

// The request's --fix entries: plan dimensions restrict the grid, cluster.gpus fixes the size,
// the rest are overrides of every plan (training.* ones also shape the 100 %-MFU probe).
struct Fixes {
  PlanGrid grid;
  std::vector<std::string> probe_sets, fixed;
  int gpus = 0;
};

Fixes parse_fixes(const PlanRequest& a) {
  Fixes x;
  for (const auto& f : a.fixes) {
    const auto eq = f.find('=');
    if (eq == std::string::npos) throw ScenarioError(fmt::format("--fix {}: expected key.path=value", f));
    if (f.substr(0, eq) == "cluster.gpus") {  // one size only: searched as the size axis
      x.gpus = std::atoi(f.c_str() + eq + 1);
      if (x.gpus <= 0) throw ScenarioError(fmt::format("--fix {}: not a GPU count", f));
      continue;
    }
    x.fixed.push_back(f);
    if (!fix_plan_dimension(&x.grid, f.substr(0, eq), f.substr(eq + 1)) && f.rfind("training.", 0) == 0 &&
        f.rfind("training.micro_batch", 0) != 0)
      x.probe_sets.push_back(f);
  }
  return x;
}

// The loader's limit on cluster.gpus.
constexpr int kMaxPlanGpus = 10000000;

// Per hardware: the fewest GPUs that could meet the deadline even at 100 % of peak, and every
// multiple of the GPU step up to the ceiling that tp·pp·cp·dp can form with the global batch.
void cluster_sizes(const PlanRequest& a, const Fixes& x, PlanResult* res) {
  int step = a.gpu_step;
  for (const auto& hw : a.hardware) {
    const auto probe = scenarios::ScenarioTemplate(base_yaml(a, hw, 1, res->global_batch, res->tokens), "plan")
                           .instantiate(x.probe_sets);
    const double flops_total = res->tokens * models::flops_per_token(probe.model, probe.training).model;
    const double peak = probe.gpu.peak(probe.training.precision);
    const double bound_gpus = std::ceil(flops_total / (a.days * units::kSecondsPerDay * peak));
    if (!(bound_gpus <= kMaxPlanGpus))  // also keeps the int below from overflowing (--days 1e-9)
      throw ScenarioError(fmt::format("--days {:g}: even at 100 % MFU the deadline needs {:.4g} {} GPUs; at most {} "
                                      "are planned", a.days, bound_gpus, hw, kMaxPlanGpus));
    const int bound = int(bound_gpus);
    if (step <= 0) step = probe.cluster.gpus_per_node;
    res->lowest_bound = res->lowest_bound ? std::min(res->lowest_bound, bound) : bound;
    // Above 8x that bound a plan would run below 12.5 % MFU: slower per GPU than any plan the
    // search keeps, so the default ceiling stops there.
    const long ceiling = a.max_gpus > 0 ? a.max_gpus : 8L * bound;
    std::set<long> model_parallel;
    for (int tp : x.grid.tp)
      for (int pp : x.grid.pp)
        for (int cp : x.grid.cp) model_parallel.insert(long(tp) * pp * cp);
    for (long mp : model_parallel)
      for (int dp = 1; dp <= res->global_batch; ++dp) {
        const long g = mp * dp;
        if (res->global_batch % dp != 0 || g > ceiling) continue;
        if (g >= bound && g % step == 0) res->sizes.insert(int(g));
      }
  }
  if (x.gpus > 0) res->sizes = {x.gpus};
  if (res->sizes.empty())
    throw ScenarioError(fmt::format(
        "no cluster size between {} GPUs (the deadline at 100 % MFU) and the ceiling is a multiple of --gpu-step {} "
        "that tp·pp·cp·dp can form with global batch {}; raise --max-gpus or --days, or change --global-batch",
        res->lowest_bound, step, res->global_batch));
}

struct Screened {
  Status status = Status::ok;  // ok: to simulate
  std::string reason;
  double bound_s = 0;
};

// Phase 1, every plan: validate, estimate memory and bound the step time from below (cheap).
std::vector<Screened> screen(const SweepSpace& space, const std::vector<scenarios::ScenarioTemplate>& bases,
                             int threads, const PlanProgress& progress) {
  std::vector<Screened> screened(std::size_t(space.size()));
  constexpr std::uint64_t kScreenChunk = 4096;
  for (std::uint64_t from = 0; from < space.size(); from += kScreenChunk) {
    const std::uint64_t n = std::min(kScreenChunk, space.size() - from);
    parallel_for(n, threads, [&](int w, std::uint64_t j) {
      Screened& s = screened[std::size_t(from + j)];
      try {
        const auto sc = bases[std::size_t(w)].instantiate(space.at(from + j).overrides);
        const auto memory = models::estimate_memory(sc.model, sc.training, sc.parallel, sc.gpu);
        if (!memory.fits()) {
          scenarios::Report partial;
          partial.scenario = sc;
          partial.memory = memory;
          s = {Status::out_of_memory, memory_error(partial), 0};
        } else {
          s.bound_s = step_time_lower_bound_s(sc);
        }
      } catch (const ScenarioError& e) {
        s = {Status::invalid, e.what(), 0};
      } catch (const std::exception& e) {
        s = {Status::error, fmt::format("internal error: {}", e.what()), 0};
      }
    });
    if (progress) progress(0, from + n, space.size());
  }
  return screened;
}

std::size_t hardware_position(const PlanRequest& a, const std::string& hw) {
  return std::size_t(std::find(a.hardware.begin(), a.hardware.end(), hw) - a.hardware.begin());
}

PlanCandidate candidate(const std::vector<std::string>& header, const SweepSpace& space, Row& r) {
  const auto num = [&](const char* col) { return std::stod(r.cells[*column_of(header, col)]); };
  PlanCandidate c;
  c.index = r.index;
  const Config cfg = space.at(r.index);
  c.hardware = cfg.values[0];
  c.gpus = std::stoi(cfg.values[1]);
  c.days = num("days_to_train");
  c.gpu_hours = num("gpu_hours");
  c.mfu = num("mfu");
  c.step_time = units::Seconds(num("step_time_s"));
  c.peak_memory = units::Bytes(num("peak_memory_bytes"));
  c.cells = std::move(r.cells);
  return c;
}

// The plans kept while simulating: the cheapest meeting the deadline and the fastest per size.
struct Kept {
  std::vector<PlanCandidate> meeting;                              // cheapest first, at most top
  std::map<std::pair<std::size_t, int>, PlanCandidate> fastest;    // by (hardware position, GPUs)
  std::map<std::uint64_t, std::vector<std::string>> simulated_cells;  // for keep_all_rows

  void offer(const PlanRequest& a, PlanCandidate c) {
    const auto key = std::make_pair(hardware_position(a, c.hardware), c.gpus);
    const auto it = fastest.find(key);
    if (it == fastest.end() || c.days < it->second.days || (c.days == it->second.days && c.index < it->second.index))
      fastest[key] = c;
    if (c.days <= a.days && a.top > 0) {
      const auto at = std::upper_bound(meeting.begin(), meeting.end(), c, [](const PlanCandidate& x, const PlanCandidate& y) {
        return x.gpu_hours != y.gpu_hours ? x.gpu_hours < y.gpu_hours : x.index < y.index;
      });
      meeting.insert(at, c);
      if (meeting.size() > a.top) meeting.pop_back();
    }
    if (a.keep_all_rows) simulated_cells.emplace(c.index, std::move(c.cells));
  }
};

// Whether plan i, by its bound alone, can no longer be the fastest for its size nor among the
// cheapest meeting the deadline; if so it is marked pruned with the reason.
bool prune(const PlanRequest& a, const PlanResult& res, const SweepSpace& space, const Kept& kept, std::uint64_t i,
           Screened* s) {
  const Config c = space.at(i);
  const int gpus = std::stoi(c.values[1]);
  const double tokens_per_step = double(res.global_batch) * a.seq_len;
  const double bound_days = res.tokens * s->bound_s / tokens_per_step / units::kSecondsPerDay;
  const double bound_hours = bound_days * 24.0 * gpus;
  const auto best = kept.fastest.find({hardware_position(a, c.values[0]), gpus});
  const bool may_be_fastest = best == kept.fastest.end() || bound_days < best->second.days;
  const bool may_be_cheapest = bound_days <= a.days && a.top > 0 &&
                               (kept.meeting.size() < a.top || bound_hours < kept.meeting.back().gpu_hours);
  if (may_be_fastest || may_be_cheapest) return false;
  s->status = Status::pruned;
  s->reason = fmt::format(
      "not simulated: its kernels alone take {:.4g} s per step ({:.4g} days), no faster than the fastest plan "
      "simulated on {} {} GPUs ({:.4g} days), and it cannot be among the {} cheapest plans meeting {:g} days",
      s->bound_s, bound_days, gpus, c.values[0], best->second.days, a.top, a.days);
  return true;
}

// Phase 2: simulate in order of the bound, skipping plans that provably cannot win. Chunks have
// a fixed size and the skip test uses only earlier chunks, so the result does not depend on
// the thread count.
Kept simulate_plans(const PlanRequest& a, PlanResult& res, const SweepSpace& space,
                    const std::vector<scenarios::ScenarioTemplate>& bases, int threads, std::vector<Screened>& screened,
                    const PlanProgress& progress) {
  std::vector<std::uint64_t> order;
  for (std::uint64_t i = 0; i < space.size(); ++i)
    if (screened[std::size_t(i)].status == Status::ok) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::uint64_t x, std::uint64_t y) {
    return screened[std::size_t(x)].bound_s < screened[std::size_t(y)].bound_s;
  });
  SweepOptions opt;
  opt.cost_per_gpu_hour = a.cost_per_gpu_hour;
  const std::size_t reason_col = *column_of(res.header, "reason");
  Kept kept;
  constexpr std::size_t kSimulateChunk = 64;
  for (std::size_t from = 0; from < order.size(); from += kSimulateChunk) {
    std::vector<std::uint64_t> chosen;
    for (std::size_t k = from; k < std::min(order.size(), from + kSimulateChunk); ++k)
      if (!prune(a, res, space, kept, order[k], &screened[std::size_t(order[k])])) chosen.push_back(order[k]);
    std::vector<Row> rows(chosen.size());
    parallel_for(chosen.size(), threads, [&](int w, std::uint64_t j) {
      rows[std::size_t(j)] = evaluate(bases[std::size_t(w)], space, space.at(chosen[std::size_t(j)]), opt);
    });
    for (Row& r : rows) {
      if (r.status != Status::ok) {
        screened[std::size_t(r.index)] = {r.status, r.cells[reason_col], 0};
        continue;
      }
      ++res.stats.ok;
      res.stats.events += r.events;
      kept.offer(a, candidate(res.header, space, r));
    }
    if (progress) progress(1, std::min(order.size(), from + kSimulateChunk), order.size());
  }
  return kept;
}

// Counts every plan by status, tallies the rejections and (keep_all_rows) lists every row.
void tally(const PlanRequest& a, const SweepSpace& space, const std::vector<Screened>& screened, Kept& kept,
           PlanResult* res) {
  SweepOptions opt;
  opt.cost_per_gpu_hour = a.cost_per_gpu_hour;
  ReasonTally reasons;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    const Screened& s = screened[std::size_t(i)];
    ++res->stats.evaluated;
    if (s.status == Status::out_of_memory) ++res->stats.out_of_memory;
    if (s.status == Status::invalid) ++res->stats.invalid;
    if (s.status == Status::error) ++res->stats.errors;
    if (s.status == Status::pruned) ++res->stats.pruned;
    if (s.status != Status::ok && s.status != Status::pruned) reasons.add(s.reason);
    if (!a.keep_all_rows) continue;
    const auto sim = kept.simulated_cells.find(i);
    res->all_rows.push_back(sim != kept.simulated_cells.end()
                                ? std::move(sim->second)
                                : make_row(space, space.at(i), opt, s.status, s.reason, nullptr).cells);
  }
  res->common_rejections = reasons.most_common(3);
}

}  // namespace

int default_global_batch(int seq_len) { return std::max(1, int(std::lround(kDefaultTokensPerStep / seq_len))); }

PlanResult search_plans(const PlanRequest& a, const PlanProgress& progress) {
  if (!(a.tokens > 0)) throw ScenarioError("--tokens: expected a positive number of tokens");
  if (!(a.days > 0)) throw ScenarioError("--days: expected a positive number of days");
  if (a.seq_len <= 0) throw ScenarioError("--seq-len: expected a positive sequence length");
  if (a.hardware.empty()) throw ScenarioError("--hardware: name at least one hardware profile");
  PlanResult res;
  res.tokens = a.tokens;
  res.global_batch = a.global_batch > 0 ? a.global_batch : default_global_batch(a.seq_len);
  const Fixes fixes = parse_fixes(a);
  cluster_sizes(a, fixes, &res);

  std::vector<Axis> axes{{"hardware", a.hardware}, {"cluster.gpus", {}}};
  for (int g : res.sizes) axes[1].values.push_back(std::to_string(g));
  const scenarios::ScenarioTemplate base(base_yaml(a, a.hardware.front(), *res.sizes.begin(), res.global_batch, a.tokens),
                                         "plan");
  PlanGrid grid = fixes.grid;
  set_moe_grid(base, {}, &grid);  // MoE models also search ep / etp
  const SweepSpace space(axes, true, fixes.fixed, *res.sizes.begin(), grid);
  res.header = sweep_header(space);
  const int threads = resolve_threads(a.threads);
  res.stats.threads = threads;
  const auto bases = worker_templates(base, threads);
  const auto started = std::chrono::steady_clock::now();

  std::vector<Screened> screened = screen(space, bases, threads, progress);
  Kept kept = simulate_plans(a, res, space, bases, threads, screened, progress);
  tally(a, space, screened, kept, &res);
  res.cheapest = std::move(kept.meeting);
  for (auto& [key, c] : kept.fastest) res.fastest_per_gpu_count.push_back(std::move(c));
  res.stats.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return res;
}

}  // namespace clustersim::studies
