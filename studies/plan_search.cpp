#include "studies/plan_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <tuple>

#include "models/flops.hpp"
#include "models/memory.hpp"
#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/scenario_template.hpp"
#include "scenarios/topology_load.hpp"
#include "studies/bound_share.hpp"
#include "studies/error_band.hpp"
#include "studies/memory_advice.hpp"
#include "studies/plan_batch.hpp"
#include "studies/plan_bound.hpp"
#include "studies/sweep_table.hpp"

namespace clustersim::studies {
namespace {

using scenarios::ScenarioError;

// Default tokens per optimizer step when --global-batch is not given: 4 Mi tokens, the batch of
// Llama 2 (Touvron et al. 2023, §2.2) and close to GPT-3 175B's 3.2 M (Brown et al. 2020, Table 2.1).
constexpr double kDefaultTokensPerStep = 4194304;

scenarios::ScenarioTemplate base_scenario(const PlanRequest& a, const std::string& hardware, int gpus, int global_batch,
                                          double tokens) {
  scenarios::ScenarioPatch s;
  s.set("name", fmt::format("plan {} on {}", a.model, hardware)).set("model", a.model).set("hardware", hardware);
  s.set("cluster.gpus", gpus).set("training.seq_len", a.seq_len).set("training.global_batch", global_batch);
  s.set("training.tokens", tokens);
  return scenarios::ScenarioTemplate(s, "plan");
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
  x.grid.max_vpp = a.max_vpp;
  x.grid.schedules = a.schedules;
  for (const auto& f : a.fixes) {
    const auto eq = f.find('=');
    if (eq == std::string::npos) throw ScenarioError(fmt::format("--fix {}: expected key.path=value", f));
    if (f.substr(0, eq) == "cluster.gpus") {  // one size only: searched as the size axis
      x.gpus = std::atoi(f.c_str() + eq + 1);
      if (x.gpus <= 0) throw ScenarioError(fmt::format("--fix {}: not a GPU count", f));
      continue;
    }
    if (f.substr(0, eq) == "training.global_batch" && a.batch_tokens_hi > 0)
      throw ScenarioError(fmt::format("--fix {}: the global batch is searched (--batch-tokens); give one or the other", f));
    x.fixed.push_back(f);
    if (!fix_plan_dimension(&x.grid, f.substr(0, eq), f.substr(eq + 1)) && f.rfind("training.", 0) == 0 &&
        f.rfind("training.micro_batch", 0) != 0)
      x.probe_sets.push_back(f);
  }
  return x;
}

// The loader's limit on cluster.gpus.
constexpr int kMaxPlanGpus = 10000000;

struct Screened {
  Status status = Status::ok;  // ok: to simulate
  std::string reason;
  double bound_s = 0;
  bool unformable = false;     // dp·micro_batch does not divide the row's batch (batch range only)
  double band_high = 1;        // the error band's high factor (at band_confidence())
  bool network_bound = false;  // bound_s is plan_step_network_bound_s (else plan_step_lower_bound_s)
};

// One hardware's part of the search: its sizes, sweep space, worker templates and screening.
struct HwSearch {
  std::string hw;
  double price = 0;          // US dollars per GPU-hour
  double board_w = 0;        // the profile's power
  double rank_rate = 1;      // cost units per GPU-hour of the cost rank (1: GPU-hours)
  int step = 0;              // cluster sizes are multiples of this
  int layers = 0;
  std::set<int> sizes;
  bool capped = false;       // the ceiling was cut to scenarios::kMaxSimulatedGpus
  std::unique_ptr<SweepSpace> space;
  std::vector<scenarios::ScenarioTemplate> bases;
  std::vector<Screened> screened;
};

// The fewest GPUs of `h` that could meet the deadline even at 100 % of peak, and every multiple
// of its GPU step up to the ceiling that tp·pp·cp·dp can form with one of the batches. When
// there is none, `why` says so.
int cluster_sizes(const PlanRequest& a, const Fixes& x, const std::vector<int>& batches, HwSearch* h, std::string* why) {
  const scenarios::ScenarioTemplate base = base_scenario(a, h->hw, 1, batches.front(), a.tokens);
  // A --fix key the contract does not know is refused before the search (as --vary's is), not
  // found invalid in every plan; the fixes' values may not suit this probe's one GPU, and that
  // is for each plan to say.
  try {
    (void)base.instantiate(scenarios::ScenarioPatch::parse(x.fixed, "--fix"));
  } catch (const scenarios::UnknownKeyError&) {
    throw;
  } catch (const ScenarioError&) {}
  const auto probe = base.instantiate(scenarios::ScenarioPatch::parse(x.probe_sets, "--fix"));
  const double flops_total = a.tokens * models::flops_per_token(probe.model, probe.training).model;
  const double peak = probe.gpu.peak(probe.training.precision).si();
  const double bound_gpus = std::ceil(flops_total / (a.days * units::kSecondsPerDay * peak));
  if (!(bound_gpus <= kMaxPlanGpus))  // also keeps the int below from overflowing (--days 1e-9)
    throw ScenarioError(fmt::format("--days {:g}: even at 100 % MFU the deadline needs {:.4g} {} GPUs; at most {} "
                                    "are planned", a.days, bound_gpus, h->hw, kMaxPlanGpus));
  const int bound = int(bound_gpus);
  // A rack-scale NVLink system is allocated in trays (each size then takes the launchers' segment
  // of its racks, as the loader does); other systems in nodes.
  h->step = a.gpu_step > 0 ? a.gpu_step : scenarios::allocation_gpus(probe.network.topology);
  h->board_w = probe.gpu.power_w;
  h->layers = probe.model.layers;
  // Above 8x that bound a plan would run below 12.5 % MFU: slower per GPU than any plan the
  // search keeps, so the default ceiling stops there.
  const long wanted = a.max_gpus > 0 ? a.max_gpus : 8L * bound;
  const long ceiling = std::min<long>(wanted, scenarios::kMaxSimulatedGpus);  // the loader refuses larger clusters
  h->capped = wanted > ceiling;
  std::set<long> model_parallel;
  for (int tp : x.grid.tp)
    for (int pp : x.grid.pp)
      for (int cp : x.grid.cp) model_parallel.insert(long(tp) * pp * cp);
  for (int batch : batches)
    for (long mp : model_parallel)
      for (int dp = 1; dp <= batch; ++dp) {
        const long g = mp * dp;
        if (batch % dp != 0 || g > ceiling) continue;
        if (g >= bound && g % h->step == 0) h->sizes.insert(int(g));
      }
  if (x.gpus > 0) h->sizes = {x.gpus};
  if (h->sizes.empty() && bound > ceiling && ceiling == scenarios::kMaxSimulatedGpus)
    *why = fmt::format("{}: even at 100 % MFU the deadline needs {} GPUs, above the {} that are simulated; raise --days",
                       h->hw, bound, scenarios::kMaxSimulatedGpus);
  else if (h->sizes.empty())
    *why = (fmt::format(
        "no {} cluster size between {} GPUs (the deadline at 100 % MFU) and the ceiling is a multiple of the GPU step "
        "{} that tp·pp·cp·dp can form with global batch {}; raise --max-gpus or --days, or change the batch",
        h->hw, bound, h->step, batches.size() == 1 ? std::to_string(batches.front()) : "in the range"));
  return bound;
}


// A plan's batch and layout, read from its typed overrides (the plan keys, cluster.gpus and, on a
// batch axis, training.global_batch).
struct Layout {
  bool batch_axis = false;
  int global_batch = 0;  // when no batch axis
  int batch_of(const Config& c) const { return batch_axis ? int(config_integer(c, "training.global_batch")) : global_batch; }
  // Whether dp·micro_batch divides the batch (dp = GPUs / (tp·pp·cp)).
  bool formable(const Config& c) const {
    const long long mp = config_integer(c, "parallelism.tp") * config_integer(c, "parallelism.pp") *
                         config_integer(c, "parallelism.cp");
    const long long dp = config_integer(c, "cluster.gpus") / mp, mb = config_integer(c, "training.micro_batch");
    return batch_of(c) % (dp * mb) == 0;
  }
};

// Phase 1, every plan: validate, estimate memory and bound the step time from below (cheap).

void screen(const Layout& layout, double confidence, HwSearch* h, int threads,
            const std::function<void(std::uint64_t)>& progress) {
  const SweepSpace& space = *h->space;
  h->screened.assign(std::size_t(space.size()), {});
  constexpr std::uint64_t kScreenChunk = 4096;
  BoundShare twins;  // a plan's ZeRO twins lie within a few indices of it (sweep_space.cpp)
  for (std::uint64_t from = 0; from < space.size(); from += kScreenChunk) {
    const std::uint64_t n = std::min(kScreenChunk, space.size() - from);
    twins.clear();
    parallel_for(n, threads, [&](int w, std::uint64_t j) {
      Screened& s = h->screened[std::size_t(from + j)];
      try {
        const Config cfg = space.at(from + j);
        if (layout.batch_axis && !layout.formable(cfg)) {
          s = {Status::invalid, fmt::format("global batch {} is not a multiple of dp x micro_batch", layout.batch_of(cfg)),
               0, true};
          return;
        }
        const auto sc = h->bases[std::size_t(w)].instantiate(cfg.overrides);
        if (auto reason = memory_prescreen(sc)) {
          s = {Status::out_of_memory, std::move(*reason), 0};
        } else {
          const std::string key = BoundShare::key(cfg);
          if (const auto twin = key.empty() ? std::nullopt : twins.find(key)) {
            s.bound_s = twin->bound_s, s.network_bound = twin->network_bound;
          } else {
            s.bound_s = plan_step_screen_bound_s(sc, &s.network_bound);
            if (!key.empty()) twins.put(key, {s.bound_s, s.network_bound});
          }
          s.band_high = error_band(sc, confidence).high;
        }
      } catch (const ScenarioError& e) {
        s = {Status::invalid, e.what(), 0};
      } catch (const std::exception& e) {
        s = {Status::error, fmt::format("internal error: {}", e.what()), 0};
      }
    });
    if (progress) progress(n);
  }
}

// The order "best" follows, lower first: plans that miss the deadline at the high end of their
// error band after those that meet it there, then (primary, secondary) by PlanRequest::rank.
using RankKey = std::tuple<bool, double, double>;
RankKey rank_key(PlanRank rank, bool misses_high, double days, double gpu_hours, int gpus, double rank_rate) {
  switch (rank) {
    case PlanRank::days: return {misses_high, days, gpu_hours * rank_rate};
    case PlanRank::gpus: return {misses_high, double(gpus), days};
    case PlanRank::cost: break;
  }
  return {misses_high, gpu_hours * rank_rate, days};
}

PlanCandidate candidate(const PlanRequest& a, const Layout& layout,
                        const HwSearch& h, Row& r) {
  const RowFigures& f = r.figures.value();
  PlanCandidate c;
  c.index = r.index;
  const Config cfg = h.space->at(r.index);
  c.hardware = h.hw;
  c.gpus = int(config_integer(cfg, "cluster.gpus"));
  c.global_batch = layout.batch_of(cfg);
  c.days = f.days_to_train;
  c.gpu_hours = f.gpu_hours;
  c.mfu = f.mfu;
  c.step_time = units::Seconds(f.step_time_s);
  c.peak_memory = units::Bytes(f.peak_memory_bytes);
  c.costs = plan_costs(c.gpu_hours, h.board_w, h.price, a.energy);
  const ErrorBand band = error_band(h.bases.front().instantiate(cfg.overrides), band_confidence(a));
  c.days_high = c.days * band.high;
  c.band_basis = band.basis;
  c.poorly_validated = band.basis.find("widened") != std::string::npos;
  c.cells = std::move(r.cells);
  return c;
}

// The energy and cost cells appended to every row (blank for plans not simulated).
std::vector<std::string> cost_cells(const PlanCandidate* c, bool priced) {
  if (!c) return {"", "", ""};
  const auto f = [](double v) { return v > 0 ? fmt::format("{:.10g}", v) : std::string(); };
  return {f(c->costs.energy_mwh), f(c->costs.energy_cost_usd), priced ? f(c->costs.total_cost_usd) : ""};
}

// The plans kept while simulating: the best meeting the deadline and the fastest per size.
struct Kept {
  struct Ranked {
    RankKey key;
    std::size_t hw;  // position in the name-ordered hardware
    PlanCandidate c;
  };
  std::vector<Ranked> meeting;                                   // best first, at most top
  std::map<std::pair<std::string, int>, PlanCandidate> fastest;  // by (hardware name, GPUs)
  std::map<std::pair<std::size_t, std::uint64_t>, std::vector<std::string>> simulated_cells;  // keep_all_rows

  static bool before(const Ranked& x, const Ranked& y) {
    return std::tie(x.key, x.hw, x.c.index) < std::tie(y.key, y.hw, y.c.index);
  }
  // Lists `r` with a kept plan of the same figures (the first by `before` stays the row shown).
  bool merge_twin(Ranked& r) {
    const auto twin = std::find_if(meeting.begin(), meeting.end(), [&](const Ranked& m) { return same_figures(m.c, r.c); });
    if (twin == meeting.end()) return false;
    Ranked shown = std::move(*twin);
    meeting.erase(twin);
    if (before(r, shown)) std::swap(r, shown);
    auto& eq = shown.c.equivalents;
    eq.push_back(r.c.cells);
    for (auto& e : r.c.equivalents) eq.push_back(std::move(e));
    std::sort(eq.begin(), eq.end());
    meeting.insert(std::upper_bound(meeting.begin(), meeting.end(), shown, before), std::move(shown));
    return true;
  }
  void offer(const PlanRequest& a, std::size_t hw, double rank_rate, PlanCandidate c) {
    const auto key = std::make_pair(c.hardware, c.gpus);
    const auto it = fastest.find(key);
    if (it == fastest.end() || c.days < it->second.days || (c.days == it->second.days && c.index < it->second.index))
      fastest[key] = c;
    if ((a.confidence > 0 ? c.days_high : c.days) <= a.days && a.top > 0) {
      Ranked r{rank_key(a.rank, c.days_high > a.days, c.days, c.gpu_hours, c.gpus, rank_rate), hw, c};
      if (!merge_twin(r)) meeting.insert(std::upper_bound(meeting.begin(), meeting.end(), r, before), r);
      if (meeting.size() > a.top) meeting.pop_back();
    }
    if (a.keep_all_rows) simulated_cells.emplace(std::make_pair(hw, c.index), std::move(c.cells));
  }
};

struct Item {
  double bound_days;
  std::size_t hw;
  std::uint64_t index;
};

// Whether plan `it`, by its bound alone, can no longer be the fastest for its size nor among the
// best meeting the deadline; if so it is marked pruned with the reason.
bool prune(const PlanRequest& a, HwSearch& h, const Kept& kept, const Item& it) {
  if (a.exhaustive) return false;
  Screened* s = &h.screened[std::size_t(it.index)];
  const Config c = h.space->at(it.index);
  const int gpus = int(config_integer(c, "cluster.gpus"));
  const double bound_hours = it.bound_days * 24.0 * gpus;
  const auto best = kept.fastest.find({h.hw, gpus});
  const bool may_be_fastest = best == kept.fastest.end() || it.bound_days < best->second.days;
  bool may_be_best = it.bound_days * (a.confidence > 0 ? s->band_high : 1) <= a.days && a.top > 0;
  if (may_be_best && kept.meeting.size() >= a.top) {
    const auto& worst = kept.meeting.back();
    const RankKey key = rank_key(a.rank, it.bound_days * s->band_high > a.days, it.bound_days, bound_hours, gpus,
                                 h.rank_rate);
    may_be_best = std::tie(key, it.hw, it.index) < std::tie(worst.key, worst.hw, worst.c.index);
  }
  if (may_be_fastest || may_be_best) return false;
  s->status = Status::pruned;
  s->reason = fmt::format(
      "not simulated: its {}, with the pipeline fill and drain, take {:.4g} s per step ({:.4g} days), no faster than the fastest plan "
      "simulated on {} {} GPUs ({:.4g} days), and it cannot be among the {} best plans meeting {:g} days",
      s->network_bound ? "passes alone (kernels with their TP, CP and EP transfers)" : "kernels alone", s->bound_s,
      it.bound_days, gpus, h.hw, best->second.days, a.top, a.days);
  return true;
}

// The plans of a chunk that the kernel bound did not skip: each not screened with the pass bound
// already (plan_step_screen_bound_s) is loaded and bounded again with its passes' network
// durations (plan_step_network_bound_s); those that bound shows cannot win
// are pruned, and the others keep their scenario for the simulation (`loaded`, parallel to
// `chosen`; empty where loading or bounding failed, for the simulation to report).
void tighten_bounds(const PlanRequest& a, const Layout& layout, double tokens, std::vector<HwSearch>& hws, int threads,
                    std::vector<Item>* chosen, std::vector<std::optional<scenarios::Scenario>>* loaded, const Kept& kept) {
  std::vector<std::optional<scenarios::Scenario>> scenarios(chosen->size());
  std::vector<double> bounds(chosen->size(), 0.0);
  parallel_for(chosen->size(), threads, [&](int w, std::uint64_t j) {
    const Item& it = (*chosen)[std::size_t(j)];
    const HwSearch& h = hws[it.hw];
    if (h.screened[std::size_t(it.index)].network_bound) return;  // screened with it already
    try {
      scenarios[std::size_t(j)] = h.bases[std::size_t(w)].instantiate(h.space->at(it.index).overrides);
      bounds[std::size_t(j)] = plan_step_network_bound_s(*scenarios[std::size_t(j)]);
    } catch (const std::exception&) {
      scenarios[std::size_t(j)].reset();
    }
  });
  std::vector<Item> kept_items;
  for (std::size_t j = 0; j < chosen->size(); ++j) {
    Item it = (*chosen)[j];
    HwSearch& h = hws[it.hw];
    Screened& s = h.screened[std::size_t(it.index)];
    if (scenarios[j] && bounds[j] > s.bound_s) {
      const double batch = layout.batch_axis ? layout.batch_of(h.space->at(it.index)) : layout.global_batch;
      s.bound_s = bounds[j];
      s.network_bound = true;
      it.bound_days = std::max(it.bound_days, tokens * s.bound_s / (batch * a.seq_len) / units::kSecondsPerDay);
      if (prune(a, h, kept, it)) continue;
    }
    kept_items.push_back(it);
    loaded->push_back(std::move(scenarios[j]));
  }
  *chosen = std::move(kept_items);
}

// Phase 2: simulate in order of the bound on days (all hardware together), skipping plans that
// provably cannot win. Chunks have a fixed size and the skip test uses only earlier chunks, so
// the result depends neither on the thread count nor on the order hardware was named in.
Kept simulate_plans(const PlanRequest& a, const Layout& layout, PlanResult& res, std::vector<HwSearch>& hws,
                    int threads, const PlanProgress& progress) {
  std::vector<Item> order;
  const double tokens_per_seq = a.seq_len;
  for (std::size_t k = 0; k < hws.size(); ++k)
    for (std::uint64_t i = 0; i < hws[k].space->size(); ++i) {
      const Screened& s = hws[k].screened[std::size_t(i)];
      if (s.status != Status::ok) continue;
      const double batch = layout.batch_axis ? layout.batch_of(hws[k].space->at(i)) : layout.global_batch;
      order.push_back({res.tokens * s.bound_s / (batch * tokens_per_seq) / units::kSecondsPerDay, k, i});
    }
  std::sort(order.begin(), order.end(), [](const Item& x, const Item& y) {
    return std::tie(x.bound_days, x.hw, x.index) < std::tie(y.bound_days, y.hw, y.index);
  });
  const std::size_t reason_col = *column_of(res.header, "reason");
  Kept kept;
  constexpr std::size_t kSimulateChunk = 64;
  for (std::size_t from = 0; from < order.size(); from += kSimulateChunk) {
    std::vector<Item> chosen;
    std::vector<std::optional<scenarios::Scenario>> loaded;
    for (std::size_t k = from; k < std::min(order.size(), from + kSimulateChunk); ++k)
      if (!prune(a, hws[order[k].hw], kept, order[k])) chosen.push_back(order[k]);
    tighten_bounds(a, layout, res.tokens, hws, threads, &chosen, &loaded, kept);
    std::vector<Row> rows(chosen.size());
    parallel_for(chosen.size(), threads, [&](int w, std::uint64_t j) {
      const Item& it = chosen[std::size_t(j)];
      const HwSearch& h = hws[it.hw];
      SweepOptions opt;
      opt.cost_per_gpu_hour = h.price;
      const Config cfg = h.space->at(it.index);
      const auto& sc = loaded[std::size_t(j)];
      rows[std::size_t(j)] = sc ? evaluate(*sc, *h.space, cfg, opt) : evaluate(h.bases[std::size_t(w)], *h.space, cfg, opt);
    });
    for (std::size_t j = 0; j < rows.size(); ++j) {
      Row& r = rows[j];
      HwSearch& h = hws[chosen[j].hw];
      if (r.status != Status::ok) {
        h.screened[std::size_t(r.index)] = {r.status, r.cells[reason_col], 0};
        continue;
      }
      ++res.stats.ok;
      res.stats.events += r.events;
      PlanCandidate c = candidate(a, layout, h, r);
      for (auto& cell : cost_cells(&c, res.priced)) c.cells.push_back(std::move(cell));
      kept.offer(a, chosen[j].hw, h.rank_rate, std::move(c));
    }
    if (progress) progress(1, std::min(order.size(), from + kSimulateChunk), order.size());
  }
  return kept;
}

// Counts every plan by status, tallies the rejections and (keep_all_rows) lists every row.
void tally(const PlanRequest& a, std::vector<HwSearch>& hws, Kept& kept, PlanResult* res) {
  ReasonTally reasons;
  for (std::size_t k = 0; k < hws.size(); ++k) {
    SweepOptions opt;
    opt.cost_per_gpu_hour = hws[k].price;
    const SweepSpace& space = *hws[k].space;
    for (std::uint64_t i = 0; i < space.size(); ++i) {
      const Screened& s = hws[k].screened[std::size_t(i)];
      if (s.unformable) {
        ++res->unformable;
      } else {
        ++res->stats.evaluated;
        if (s.status == Status::out_of_memory) ++res->stats.out_of_memory;
        if (s.status == Status::invalid) ++res->stats.invalid;
        if (s.status == Status::error) ++res->stats.errors;
        if (s.status == Status::pruned) ++res->stats.pruned;
        if (s.status != Status::ok && s.status != Status::pruned) reasons.add(s.reason);
      }
      if (!a.keep_all_rows) continue;
      const auto sim = kept.simulated_cells.find({k, i});
      if (sim != kept.simulated_cells.end()) {
        res->all_rows.push_back(std::move(sim->second));
        continue;
      }
      auto cells = make_row(space, space.at(i), opt, s.status, s.reason, nullptr).cells;
      for (auto& cell : cost_cells(nullptr, res->priced)) cells.push_back(std::move(cell));
      res->all_rows.push_back(std::move(cells));
    }
  }
  res->common_rejections = reasons.most_common(3);
}

// The hardware to search, in name order; throws on a repeated name.
std::vector<std::string> hardware_in_order(const std::vector<std::string>& given) {
  std::vector<std::string> hw = given;
  std::sort(hw.begin(), hw.end());
  for (std::size_t i = 1; i < hw.size(); ++i)
    if (hw[i] == hw[i - 1]) throw ScenarioError(fmt::format("--hardware: {} is listed twice", hw[i]));
  return hw;
}

void check_request(const PlanRequest& a) {
  if (!(a.tokens > 0)) throw ScenarioError("--tokens: expected a positive number of tokens");
  if (!(a.days > 0)) throw ScenarioError("--days: expected a positive number of days");
  if (a.seq_len <= 0) throw ScenarioError("--seq-len: expected a positive sequence length");
  if (a.hardware.empty()) throw ScenarioError("--hardware: name at least one hardware profile");
  if (a.max_vpp < 1 || a.max_vpp > 64) throw ScenarioError(fmt::format("--max-vpp {}: expected 1 to 64", a.max_vpp));
  if (a.schedules.empty()) throw ScenarioError("--schedules: name at least one of 1f1b, gpipe, interleaved, zb-h1");
  if (a.batch_tokens_hi > 0 && a.global_batch > 0)
    throw ScenarioError("--batch-tokens and --global-batch: give one (a range to search, or one batch)");
  if (!(a.cost_per_gpu_hour >= 0))  // the CLI's own words for the price it reads (parse_gpu_hour_prices)
    parse_gpu_hour_prices(fmt::format("{:g}", a.cost_per_gpu_hour));
  if (!(a.confidence >= 0 && a.confidence < 1))
    throw ScenarioError(fmt::format("--confidence {}: expected a probability such as 0.9 (0: no error band)", a.confidence));
  check_energy_options(a.energy);
}

}  // namespace

bool same_figures(const PlanCandidate& x, const PlanCandidate& y) {
  return x.hardware == y.hardware && x.gpus == y.gpus && x.global_batch == y.global_batch &&
         x.step_time == y.step_time && x.peak_memory == y.peak_memory && x.gpu_hours == y.gpu_hours &&
         x.costs.total_cost_usd == y.costs.total_cost_usd && x.days_high == y.days_high;
}

namespace {

// Tokens as --batch-tokens reads them: "16M" (2^20), "512k" (2^10) or a plain count.
std::string batch_tokens_text(long tokens) {
  if (tokens % (1L << 20) == 0) return fmt::format("{}M", tokens >> 20);
  if (tokens % (1L << 10) == 0) return fmt::format("{}k", tokens >> 10);
  return std::to_string(tokens);
}

}  // namespace

std::string batch_binding_note(const PlanRequest& a, const PlanResult& res) {
  const PlanCandidate* p = res.cheapest.empty() ? nullptr : &res.cheapest.front();
  for (const auto& c : res.fastest_per_gpu_count)
    if (res.cheapest.empty() && (!p || c.days < p->days)) p = &c;
  if (!p) return "";
  const auto cell = [&](const char* col) { return std::stol(p->cells[*column_of(res.header, col)]); };
  const long dp = cell("dp"), mb = cell("training.micro_batch");
  if (dp * mb != p->global_batch) return "";
  const long tokens = long(p->global_batch) * a.seq_len;
  return fmt::format("the global batch binds: the {} plan ({} {} GPUs, {:.1f} days) runs dp {} x micro_batch {} = its "
                     "whole batch of {} sequences, with no gradient accumulation left, so more GPUs need a bigger batch; "
                     "try --batch-tokens {}..{} if the optimizer tolerates it",
                     res.cheapest.empty() ? "fastest" : "best", p->gpus, p->hardware, p->days, dp, mb,
                     p->global_batch, batch_tokens_text(tokens), batch_tokens_text(4 * tokens));
}

double band_confidence(const PlanRequest& a) { return a.confidence > 0 ? a.confidence : kDefaultBandConfidence; }

int default_global_batch(int seq_len) { return std::max(1, int(std::lround(kDefaultTokensPerStep / seq_len))); }

PlanRank parse_plan_rank(const std::string& text) {
  if (text == "cost") return PlanRank::cost;
  if (text == "days") return PlanRank::days;
  if (text == "gpus") return PlanRank::gpus;
  throw ScenarioError(fmt::format("--by {}: expected cost, days or gpus", text));
}

const char* name(PlanRank r) {
  switch (r) {
    case PlanRank::days: return "days";
    case PlanRank::gpus: return "gpus";
    case PlanRank::cost: break;
  }
  return "cost";
}

namespace {

// Whether the fastest plans still gain from more GPUs at the largest size searched: the fastest
// there beats the fastest at the next smaller size.
bool still_scaling(const PlanResult& res) {
  std::map<int, double> fastest;  // GPUs -> days
  for (const auto& c : res.fastest_per_gpu_count)
    if (!fastest.count(c.gpus) || c.days < fastest[c.gpus]) fastest[c.gpus] = c.days;
  if (fastest.size() < 2) return !fastest.empty();
  const auto top = fastest.rbegin();
  return top->second < std::next(top)->second;
}

PlanResult search_within(const PlanRequest& a, const PlanProgress& progress);

}  // namespace

PlanResult search_plans(const PlanRequest& a, const PlanProgress& progress) {
  PlanResult res = search_within(a, progress);
  // The default ceiling, 8x the 100 %-MFU count, skips plans below 12.5 % MFU. When no plan meets
  // the deadline below it and the fastest ones still gain from more GPUs, search on, 4x the
  // ceiling at a time, up to the simulated cap (the user's --max-gpus is never passed).
  long ceiling = 8L * res.lowest_bound;
  while (a.max_gpus == 0 && res.cheapest.empty() && ceiling < scenarios::kMaxSimulatedGpus && still_scaling(res)) {
    PlanRequest wider = a;
    wider.max_gpus = int(std::min<long>(4 * ceiling, scenarios::kMaxSimulatedGpus));
    PlanResult more = search_within(wider, progress);
    more.widened_to = wider.max_gpus;
    more.stats.wall_s += res.stats.wall_s;  // the wider search covers the smaller sizes again
    ceiling = wider.max_gpus;
    res = std::move(more);
  }
  return res;
}

namespace {

PlanResult search_within(const PlanRequest& a, const PlanProgress& progress) {
  check_request(a);
  PlanResult res;
  res.tokens = a.tokens;
  res.hardware = hardware_in_order(a.hardware);
  res.batches = a.batch_tokens_hi > 0 ? candidate_batches({a.batch_tokens_lo, a.batch_tokens_hi}, a.seq_len)
                                      : std::vector<int>{a.global_batch > 0 ? a.global_batch : default_global_batch(a.seq_len)};
  res.global_batch = res.batches.front();
  Layout layout{a.batch_tokens_hi > 0, res.global_batch};
  std::map<std::string, double> prices = a.prices;
  if (a.cost_per_gpu_hour > 0 && !prices.count("")) prices[""] = a.cost_per_gpu_hour;
  check_gpu_hour_prices(prices, res.hardware);
  res.priced = std::any_of(prices.begin(), prices.end(), [](const auto& p) { return p.second > 0; });
  Fixes fixes = parse_fixes(a);
  const int threads = resolve_threads(a.threads);
  res.stats.threads = threads;

  const auto& pps = fixes.grid.pp;
  const bool pipelined = std::any_of(pps.begin(), pps.end(), [](int pp) { return pp > 1; });
  if (pipelined && std::find(a.schedules.begin(), a.schedules.end(), "zb-h1") == a.schedules.end())
    res.notes.push_back("the zb-h1 pipeline schedule (add it with --schedules 1f1b,zb-h1,interleaved; "
                        "run --explain advises it for a chosen 1F1B plan with a large bubble)");
  std::vector<HwSearch> hws;
  std::string why;
  for (std::size_t k = 0; k < res.hardware.size(); ++k) {
    HwSearch h;
    h.hw = res.hardware[k];
    const int bound = cluster_sizes(a, fixes, res.batches, &h, &why);
    res.lowest_bound = k ? std::min(res.lowest_bound, bound) : bound;
    res.sizes_by_hardware[h.hw] = h.sizes;
    if (h.capped && !h.sizes.empty())
      res.notes.push_back(fmt::format("{} clusters above {} GPUs, the most that are simulated (--max-gpus is capped there)",
                                      h.hw, scenarios::kMaxSimulatedGpus));
    if (h.sizes.empty()) {  // searched no further; the report says why
      res.notes.push_back(why);
      continue;
    }
    res.sizes.insert(h.sizes.begin(), h.sizes.end());
    h.price = gpu_hour_price(prices, h.hw);
    h.rank_rate = res.priced ? plan_costs(1, h.board_w, h.price, a.energy).total_cost_usd : 1;
    PlanGrid grid = fixes.grid;
    grid.layers = h.layers;
    const scenarios::ScenarioTemplate base = base_scenario(a, h.hw, *h.sizes.begin(), res.global_batch, a.tokens);
    set_model_grid(base, {}, &grid);  // the model's rules; MoE models also search ep / etp
    for (const auto& f : fixes.fixed)   // a --fix model.KEY changes the model: the loader judges each plan
      if (f.rfind("model.", 0) == 0) grid.model.reset();
    std::vector<Axis> axes{{"hardware", {h.hw}}, {"cluster.gpus", {}}};
    for (int g : h.sizes) axes[1].values.push_back(std::to_string(g));
    if (layout.batch_axis) {
      axes.push_back({"training.global_batch", {}});
      for (int b : res.batches) axes.back().values.push_back(std::to_string(b));
    }
    h.space = std::make_unique<SweepSpace>(axes, true, fixes.fixed, *h.sizes.begin(), grid);
    h.space->set_origins({"plan", "--fix", "plan"});  // the hardware, sizes and layouts plan chose; the user's --fix
    h.bases = worker_templates(std::move(base), threads);
    hws.push_back(std::move(h));
  }
  if (hws.empty()) throw ScenarioError(why);
  res.header = sweep_header(*hws.front().space);
  for (const char* col : {"energy_mwh", "energy_cost_usd", "total_cost_usd"}) res.header.push_back(col);
  const auto started = std::chrono::steady_clock::now();

  std::uint64_t total = 0, done = 0;
  for (const auto& h : hws) total += h.space->size();
  for (auto& h : hws)
    screen(layout, band_confidence(a), &h, threads, [&](std::uint64_t n) {
      done += n;
      if (progress) progress(0, done, total);
    });
  Kept kept = simulate_plans(a, layout, res, hws, threads, progress);
  tally(a, hws, kept, &res);
  for (auto& r : kept.meeting) res.cheapest.push_back(std::move(r.c));
  for (auto& [key, c] : kept.fastest) res.fastest_per_gpu_count.push_back(std::move(c));
  res.stats.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return res;
}

}  // namespace

}  // namespace clustersim::studies
