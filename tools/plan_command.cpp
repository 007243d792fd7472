// `clustersim plan`: how many GPUs, and which parallelism plan, train MODEL on TOKENS within
// DAYS. Searches the cluster sizes that --auto-parallel plans can form with the global batch,
// simulating every plan with the sweep engine, and prints the cheapest plans that meet the
// deadline and the fastest plan for each GPU count.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "models/flops.hpp"
#include "models/memory.hpp"
#include "scenarios/error.hpp"
#include "scenarios/scenario_template.hpp"
#include "sim/quantity.hpp"
#include "tools/output_file.hpp"
#include "tools/progress.hpp"
#include "tools/report.hpp"
#include "tools/subcommands.hpp"
#include "tools/sweep_engine.hpp"
#include "tools/sweep_table.hpp"

namespace clustersim::tools {
namespace {

using scenarios::ScenarioError;

// Default tokens per optimizer step when --global-batch is not given: 4 Mi tokens, the batch of
// Llama 2 (Touvron et al. 2023, §2.2) and close to GPT-3 175B's 3.2 M (Brown et al. 2020, Table 2.1).
constexpr double kDefaultTokensPerStep = 4194304;

struct PlanArgs {
  std::string model, tokens, hardware = "h100-sxm";
  double days = 0;
  int seq_len = 4096;
  int global_batch = 0;
  double cost_per_gpu_hour = 0;
  int max_gpus = 0;
  int gpu_step = 0;
  std::vector<std::string> fixes;
  bool json = false;
  std::string csv;
  std::size_t top = 10;
  int threads = 0;
  bool no_progress = false;
};

double parse_count(const std::string& text, const std::string& option) {
  std::string why;
  const auto v = sim::parse_quantity(text, sim::Dimension::count, &why);
  if (!v || *v <= 0) throw ScenarioError(fmt::format("{} {}: expected a positive number such as 15e12 or 15T", option, text));
  return *v;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == ',') {
      if (i > start) out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

std::string base_yaml(const PlanArgs& a, const std::string& hardware, int gpus, int global_batch, double tokens) {
  return fmt::format(
      "name: plan {} on {}\nmodel: {}\nhardware: {}\ncluster:\n  gpus: {}\n"
      "training:\n  seq_len: {}\n  global_batch: {}\n  tokens: {:.17g}\n",
      a.model, hardware, a.model, hardware, gpus, a.seq_len, global_batch, tokens);
}

struct Candidate {
  std::vector<std::string> cells;
  double days = 0, gpu_hours = 0;
  std::uint64_t index = 0;
};

int run_plan_command(const PlanArgs& a) {
  const double tokens = parse_count(a.tokens, "--tokens");
  if (!(a.days > 0)) throw ScenarioError("--days: expected a positive number of days");
  if (a.seq_len <= 0) throw ScenarioError("--seq-len: expected a positive sequence length");
  const int global_batch = a.global_batch > 0 ? a.global_batch
                                              : std::max(1, int(std::lround(kDefaultTokensPerStep / a.seq_len)));
  const auto hardware = split_list(a.hardware);
  if (hardware.empty()) throw ScenarioError("--hardware: name at least one hardware profile");

  // Plan dimensions the user fixed restrict the grid; the sizes searched follow from it.
  PlanGrid grid;
  std::vector<std::string> probe_sets, fixed;
  int fixed_gpus = 0;
  for (const auto& f : a.fixes) {
    const auto eq = f.find('=');
    if (eq == std::string::npos) throw ScenarioError(fmt::format("--fix {}: expected key.path=value", f));
    if (f.substr(0, eq) == "cluster.gpus") {  // one size only: searched as the size axis
      fixed_gpus = std::atoi(f.c_str() + eq + 1);
      if (fixed_gpus <= 0) throw ScenarioError(fmt::format("--fix {}: not a GPU count", f));
      continue;
    }
    fixed.push_back(f);
    if (!fix_plan_dimension(&grid, f.substr(0, eq), f.substr(eq + 1)) && f.rfind("training.", 0) == 0 &&
        f.rfind("training.micro_batch", 0) != 0)
      probe_sets.push_back(f);
  }

  // Per hardware: the fewest GPUs that could meet the deadline even at 100 % of peak.
  std::set<int> sizes;
  int step = a.gpu_step;
  int lowest_bound = 0;
  for (const auto& hw : hardware) {
    const auto probe = scenarios::ScenarioTemplate(base_yaml(a, hw, 1, global_batch, tokens), "plan").instantiate(probe_sets);
    const double flops_total = tokens * models::flops_per_token(probe.model, probe.training).model;
    const double peak = probe.gpu.peak(probe.training.precision);
    const int bound = int(std::ceil(flops_total / (a.days * 86400.0 * peak)));
    if (step <= 0) step = probe.cluster.gpus_per_node;
    lowest_bound = lowest_bound ? std::min(lowest_bound, bound) : bound;
    // Above 8x that bound a plan would run below 12.5 % MFU: slower per GPU than any plan the
    // search keeps, so the default ceiling stops there.
    const long ceiling = a.max_gpus > 0 ? a.max_gpus : 8L * bound;
    std::set<long> model_parallel;
    for (int tp : grid.tp)
      for (int pp : grid.pp)
        for (int cp : grid.cp) model_parallel.insert(long(tp) * pp * cp);
    for (long mp : model_parallel)
      for (int dp = 1; dp <= global_batch; ++dp) {
        const long g = mp * dp;
        if (global_batch % dp != 0 || g > ceiling) continue;
        if (g >= bound && g % step == 0) sizes.insert(int(g));
      }
  }
  if (fixed_gpus > 0) sizes = {fixed_gpus};
  if (sizes.empty())
    throw ScenarioError(fmt::format(
        "no cluster size between {} GPUs (the deadline at 100 % MFU) and the ceiling is a multiple of --gpu-step {} "
        "that tp·pp·cp·dp can form with global batch {}; raise --max-gpus or --days, or change --global-batch",
        lowest_bound, step, global_batch));

  std::vector<Axis> axes{{"hardware", hardware}, {"cluster.gpus", {}}};
  for (int g : sizes) axes[1].values.push_back(std::to_string(g));
  const scenarios::ScenarioTemplate base(base_yaml(a, hardware.front(), *sizes.begin(), global_batch, tokens), "plan");
  const SweepSpace space(axes, true, fixed, *sizes.begin(), grid);
  const auto header = sweep_header(space);
  SweepOptions opt;
  opt.cost_per_gpu_hour = a.cost_per_gpu_hour;
  const int threads = resolve_threads(a.threads);
  const auto bases = worker_templates(base, threads);
  const auto started = std::chrono::steady_clock::now();
  const bool progress = !a.no_progress && stderr_is_terminal();
  std::optional<OutputFile> csv;
  if (!a.csv.empty()) csv.emplace(a.csv), csv->stream() << csv_line(header);

  // Phase 1, every plan: validate, estimate memory and bound the step time from below (cheap).
  struct Screened {
    Status status = Status::ok;  // ok: to simulate
    std::string reason;
    double bound_s = 0;
  };
  std::vector<Screened> screened(std::size_t(space.size()));
  ProgressBar screen_bar("plan: checking plans ", progress);
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
    screen_bar.update(from + n, space.size());
  }
  screen_bar.finish();

  // Phase 2: simulate in order of the bound, skipping plans that provably can neither be the
  // fastest for their GPU count nor among the cheapest meeting the deadline. Chunks have a fixed
  // size and the skip test uses only earlier chunks, so the result does not depend on threads.
  std::vector<std::uint64_t> order;
  for (std::uint64_t i = 0; i < space.size(); ++i)
    if (screened[std::size_t(i)].status == Status::ok) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::uint64_t x, std::uint64_t y) {
    return screened[std::size_t(x)].bound_s < screened[std::size_t(y)].bound_s;
  });
  const std::size_t days_col = *column_of(header, "days_to_train"), hours_col = *column_of(header, "gpu_hours");
  const double tokens_per_step = double(global_batch) * a.seq_len;
  std::vector<Candidate> meeting;  // cheapest first, at most a.top
  std::map<std::pair<std::size_t, int>, Candidate> fastest;  // by (hardware position, GPUs)
  std::map<std::uint64_t, std::vector<std::string>> simulated_cells;  // for --csv
  SweepStats stats;
  stats.threads = threads;
  ProgressBar sim_bar("plan: simulating plans", progress);
  constexpr std::size_t kSimulateChunk = 64;
  for (std::size_t from = 0; from < order.size(); from += kSimulateChunk) {
    std::vector<std::uint64_t> chosen;
    for (std::size_t k = from; k < std::min(order.size(), from + kSimulateChunk); ++k) {
      const std::uint64_t i = order[k];
      const Config c = space.at(i);
      const std::size_t hw = std::size_t(std::find(hardware.begin(), hardware.end(), c.values[0]) - hardware.begin());
      const int gpus = std::stoi(c.values[1]);
      const double bound_days = tokens * screened[std::size_t(i)].bound_s / tokens_per_step / 86400.0;
      const double bound_hours = bound_days * 24.0 * gpus;
      const auto best = fastest.find({hw, gpus});
      const bool may_be_fastest = best == fastest.end() || bound_days < best->second.days;
      const bool may_be_cheapest =
          bound_days <= a.days && a.top > 0 && (meeting.size() < a.top || bound_hours < meeting.back().gpu_hours);
      if (may_be_fastest || may_be_cheapest) {
        chosen.push_back(i);
        continue;
      }
      screened[std::size_t(i)].status = Status::pruned;
      screened[std::size_t(i)].reason = fmt::format(
          "not simulated: its kernels alone take {:.4g} s per step ({:.4g} days), no faster than the fastest plan "
          "simulated on {} {} GPUs ({:.4g} days), and it cannot be among the {} cheapest plans meeting {:g} days",
          screened[std::size_t(i)].bound_s, bound_days, gpus, c.values[0], best->second.days, a.top, a.days);
    }
    std::vector<Row> rows(chosen.size());
    parallel_for(chosen.size(), threads, [&](int w, std::uint64_t j) {
      rows[std::size_t(j)] = evaluate(bases[std::size_t(w)], space, space.at(chosen[std::size_t(j)]), opt);
    });
    for (Row& r : rows) {
      if (r.status != Status::ok) {
        screened[std::size_t(r.index)] = {r.status, r.cells[*column_of(header, "reason")], 0};
        continue;
      }
      Candidate c{r.cells, std::stod(r.cells[days_col]), std::stod(r.cells[hours_col]), r.index};
      const std::size_t hw = std::size_t(std::find(hardware.begin(), hardware.end(), space.at(r.index).values[0]) -
                                         hardware.begin());
      const auto key = std::make_pair(hw, std::stoi(space.at(r.index).values[1]));
      const auto it = fastest.find(key);
      if (it == fastest.end() || c.days < it->second.days ||
          (c.days == it->second.days && c.index < it->second.index))
        fastest[key] = c;
      if (c.days <= a.days && a.top > 0) {
        const auto at = std::upper_bound(meeting.begin(), meeting.end(), c, [](const Candidate& x, const Candidate& y) {
          return x.gpu_hours != y.gpu_hours ? x.gpu_hours < y.gpu_hours : x.index < y.index;
        });
        meeting.insert(at, c);
        if (meeting.size() > a.top) meeting.pop_back();
      }
      if (csv) simulated_cells.emplace(r.index, std::move(r.cells));
      ++stats.ok;
      stats.events += r.events;
    }
    sim_bar.update(std::min(order.size(), from + kSimulateChunk), order.size());
  }
  sim_bar.finish();

  ReasonTally reasons;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    const Screened& s = screened[std::size_t(i)];
    ++stats.evaluated;
    if (s.status == Status::out_of_memory) ++stats.out_of_memory;
    if (s.status == Status::invalid) ++stats.invalid;
    if (s.status == Status::error) ++stats.errors;
    if (s.status == Status::pruned) ++stats.pruned;
    if (s.status != Status::ok && s.status != Status::pruned) reasons.add(s.reason);
    if (!csv) continue;
    const auto sim = simulated_cells.find(i);
    csv->stream() << csv_line(sim != simulated_cells.end() ? sim->second
                                                             : make_row(space, space.at(i), opt, s.status, s.reason, nullptr).cells);
  }
  stats.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const auto common = reasons.most_common(3);
  fmt::print(stderr, "plan: {} plans in {:.2f} s on {} threads: {} simulated, {} skipped by the bound\n", stats.evaluated,
             stats.wall_s, stats.threads, stats.ok, stats.pruned);

  const std::vector<std::string> plan_columns = {"hardware", "cluster.gpus", "parallelism.tp", "parallelism.pp",
                                                 "parallelism.cp", "dp", "parallelism.vpp", "training.micro_batch",
                                                 "parallelism.zero_stage", "training.recompute"};
  if (a.json) {
    auto row_json = [&](const Candidate& c) {
      std::string o = "{";
      for (const auto& col : plan_columns)
        o += fmt::format("{}: {}, ", json_quote(col), json_scalar(c.cells[*column_of(header, col)]));
      for (const char* k : {"mfu", "step_time_s", "days_to_train", "gpu_hours", "cost_usd", "peak_memory_bytes"})
        o += fmt::format("{}: {}{}", json_quote(k), json_scalar(c.cells[*column_of(header, k)]),
                         std::string(k) == "peak_memory_bytes" ? "" : ", ");
      return o + "}";
    };
    std::string o = fmt::format("{{\n  \"model\": {},\n  \"tokens\": {:.17g},\n  \"days\": {:.17g},\n  \"seq_len\": {},\n"
                                "  \"global_batch\": {},\n  \"plans\": {},\n  \"simulated\": {},\n  \"skipped\": {},\n"
                                "  \"cheapest\": [",
                                json_quote(a.model), tokens, a.days, a.seq_len, global_batch, stats.evaluated, stats.ok,
                                stats.pruned);
    for (std::size_t i = 0; i < meeting.size(); ++i) o += (i ? ",\n    " : "\n    ") + row_json(meeting[i]);
    o += meeting.empty() ? "],\n  \"fastest_per_gpu_count\": [" : "\n  ],\n  \"fastest_per_gpu_count\": [";
    std::size_t i = 0;
    for (const auto& [key, c] : fastest) o += (i++ ? ",\n    " : "\n    ") + row_json(c);
    o += fastest.empty() ? "],\n  \"common_rejections\": [" : "\n  ],\n  \"common_rejections\": [";
    for (std::size_t j = 0; j < common.size(); ++j)
      o += fmt::format("{}{{\"count\": {}, \"reason\": {}}}", j ? ",\n    " : "\n    ", common[j].first, json_quote(common[j].second));
    o += common.empty() ? "]\n}\n" : "\n  ]\n}\n";
    fmt::print("{}", o);
  } else {
    fmt::print("plan: {} on {:.4g} tokens within {:g} days; seq {}, global batch {} ({:.3g} M tokens/step); hardware {}\n",
               a.model, tokens, a.days, a.seq_len, global_batch, double(global_batch) * a.seq_len / 1e6, a.hardware);
    fmt::print("searched {} cluster sizes from {} GPUs (the deadline at 100 % MFU), {} plans: {} simulated, {} skipped "
               "(could not win: bound on their step time), {} out of memory, {} invalid\n",
               sizes.size(), lowest_bound, stats.evaluated, stats.ok, stats.pruned, stats.out_of_memory,
               stats.invalid + stats.errors);
    std::vector<std::vector<std::string>> rows;
    for (const auto& c : meeting) rows.push_back(c.cells);
    if (rows.empty()) fmt::print("\nno plan meets {:g} days\n", a.days);
    else fmt::print("\ncheapest plans meeting {:g} days{}:\n{}", a.days,
                    a.cost_per_gpu_hour > 0 ? fmt::format(" at ${}/GPU-hour", a.cost_per_gpu_hour) : " (by GPU-hours)",
                    format_top_table(header, plan_columns, rows));
    rows.clear();
    for (const auto& [key, c] : fastest) rows.push_back(c.cells);
    if (!rows.empty()) fmt::print("\nfastest plan per GPU count:\n{}", format_top_table(header, plan_columns, rows));
    if (!common.empty()) {
      fmt::print("\nmost common reasons plans were rejected:\n");
      for (const auto& [n, reason] : common) fmt::print("  {} like: {}\n", n, reason);
    }
  }
  if (csv) csv->commit();
  return meeting.empty() ? 3 : 0;
}

}  // namespace

Subcommand add_plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  auto* c = app.add_subcommand("plan", "find the cluster size and parallelism plan that train a model within a deadline");
  c->add_option("--model", args->model, "model preset, e.g. llama3-70b")->required();
  c->add_option("--tokens", args->tokens, "training tokens, e.g. 15e12 or 15T")->required();
  c->add_option("--hardware", args->hardware, "hardware profile(s), comma-separated: h100-sxm,b200")->capture_default_str();
  c->add_option("--days", args->days, "deadline in days")->required();
  c->add_option("--seq-len", args->seq_len, "sequence length")->capture_default_str();
  c->add_option("--global-batch", args->global_batch, "sequences per step (default: 4 Mi tokens / seq-len)");
  c->add_option("--cost-per-gpu-hour", args->cost_per_gpu_hour, "price per GPU-hour for the cost column");
  c->add_option("--max-gpus", args->max_gpus, "largest cluster to consider (default: 8x the 100 %-MFU bound)");
  c->add_option("--gpu-step", args->gpu_step, "cluster sizes are multiples of this (default: GPUs per node)");
  c->add_option("--fix", args->fixes, "fix a key in every plan: --fix parallelism.tp=8")
      ->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  c->add_flag("--json", args->json, "print one JSON object");
  c->add_option("--csv", args->csv, "write every plan evaluated to this CSV file");
  c->add_option("--top", args->top, "how many cheapest plans to list")->capture_default_str();
  c->add_option("--threads", args->threads, "worker threads (0: every core)")->capture_default_str();
  c->add_flag("--no-progress", args->no_progress, "never draw the progress bar");
  return {c, [args] { return run_plan_command(*args); }};
}

}  // namespace clustersim::tools
