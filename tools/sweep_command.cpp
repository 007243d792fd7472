// `clustersim sweep`: the cartesian product of --vary values (and --auto-parallel plans) over a
// scenario, to CSV / JSON lines, with a top-k table.
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include "reporters/html_report.hpp"
#include "reporters/sweep_plot.hpp"
#include "scenarios/error.hpp"
#include "studies/auto_grid.hpp"
#include "studies/counted.hpp"
#include "studies/metrics.hpp"
#include "studies/sweep_engine.hpp"
#include "studies/sweep_table.hpp"
#include "tools/output_file.hpp"
#include "tools/progress.hpp"
#include "tools/subcommands.hpp"
#include "tools/sweep_request.hpp"

namespace clustersim::tools {

using namespace studies;  // the library this front end prints
using namespace reporters;  // and the writers it prints with
namespace {

using scenarios::ScenarioError;

struct SweepArgs {
  std::string scenario;
  std::vector<std::string> vary, sets;
  bool auto_parallel = false;
  std::string csv, jsonl, plot, html, shard = "0/1", by = "mfu";
  std::string schedules;  // --schedules; "": PlanGrid's default
  std::size_t top = 10;
  int threads = 0;
  double cost_per_gpu_hour = 0;
  bool no_progress = false;
};

// --html: the chart of every ok configuration and the top-k table.
void write_sweep_html(const SweepArgs& a, const SweepSpace& space, const SweepStats& stats, const TopK& top,
                      StudyHtml& page) {
  page.add_note(fmt::format("{} (shard {}/{} of {}): {} ok, {} out of memory, {} invalid",
                            counted(stats.evaluated, "configuration"), parse_shard(a.shard).index,
                            parse_shard(a.shard).count, space.size(), stats.ok, stats.out_of_memory,
                            stats.invalid + stats.errors));
  for (const auto& s : a.sets) page.add_note("--set " + s);
  page.add_table(fmt::format("top {} by {}", top.rows().size(), name(parse_rank_by(a.by))), top.rows());
  write_file_atomically(a.html, page.render());
}

int run_sweep_command(const SweepArgs& a) {
  const auto base = scenarios::ScenarioTemplate::from_file(a.scenario);
  const SweepSetup setup = sweep_setup(base, a.scenario, a.vary, a.auto_parallel, a.sets, a.schedules, a.threads);
  const SweepSpace& space = setup.space;
  if (const PlanGrid& g = space.grid();
      g.drop_recompute_modules && g.recompute != std::vector<std::string>{"selective"})
    fmt::print(stderr,
               "note: training.recompute_modules applies to recompute: selective; the grid's other recompute "
               "plans run without it\n");
  const RankBy by = parse_rank_by(a.by);
  SweepOptions opt;
  opt.threads = a.threads;
  opt.shard = parse_shard(a.shard);
  opt.cost_per_gpu_hour = a.cost_per_gpu_hour;
  opt.jsonl = !a.jsonl.empty();
  const auto header = sweep_header(space);
  std::optional<OutputFile> csv, jsonl;
  if (!a.csv.empty()) csv.emplace(a.csv), csv->stream() << csv_line(header);
  if (!a.jsonl.empty()) jsonl.emplace(a.jsonl);
  ProgressBar bar("sweep", !a.no_progress && stderr_is_terminal());
  opt.on_progress = [&](std::uint64_t done, std::uint64_t total) { bar.update(done, total); };
  TopK top(by, a.top);
  ReasonTally reasons;
  const std::size_t reason_col = *column_of(header, "reason");
  // --plot: the ranking metric against the first swept key.
  const char* metric = by == RankBy::mfu ? "mfu" : by == RankBy::step_time ? "step_time_s"
                       : by == RankBy::days ? "days_to_train" : "cost_usd";
  const auto metric_col = column_of(header, metric);
  const auto x_col = space.columns().empty() ? std::nullopt : column_of(header, space.columns().front());
  if (!a.plot.empty() && (!metric_col || !x_col))
    throw ScenarioError(fmt::format("--plot {}: needs at least one swept key (--vary or --auto-parallel)", a.plot));
  std::vector<SweepPoint> points;
  std::optional<StudyHtml> page;
  if (!a.html.empty()) page.emplace("sweep of " + a.scenario, header, space.columns(), metric, by == RankBy::mfu);
  const auto stats = run_sweep(base, space, opt, [&](const Row& r) {
    if (csv) csv->stream() << csv_line(r.cells);
    if (jsonl) jsonl->stream() << r.json << '\n';
    top.offer(r.index, r.figures, r.cells);
    if (r.status != Status::ok) reasons.add(r.cells[reason_col]);
    // cost_usd is blank without a price: no point, as in the CSV.
    const bool plotted = r.figures && (by != RankBy::cost || (a.cost_per_gpu_hour > 0 && r.figures->gpu_hours > 0));
    if (!a.plot.empty() && plotted)
      points.push_back({r.cells[*x_col], by == RankBy::cost ? r.figures->gpu_hours * a.cost_per_gpu_hour
                                                            : r.figures->rank_value(by)});
    if (page) page->offer(r.cells);
  });
  bar.finish();
  if (!a.plot.empty())
    write_file_atomically(a.plot, sweep_plot_svg(points, space.columns().front(), metric, by == RankBy::mfu,
                                                 fmt::format("sweep of {}: {} by {}", a.scenario, metric, space.columns().front())));
  if (page) write_sweep_html(a, space, stats, top, *page);
  if (csv) csv->commit();
  if (jsonl) jsonl->commit();
  fmt::print(stderr, "swept {} (shard {}/{} of {}) in {:.2f} s: {:.0f} configurations/s on {}\n",
             counted(stats.evaluated, "configuration"), opt.shard.index, opt.shard.count, space.size(), stats.wall_s,
             double(stats.evaluated) / std::max(stats.wall_s, 1e-9), counted(stats.threads, "thread"));
  fmt::print("{}: {} ok, {} out of memory, {} invalid{}\n", counted(stats.evaluated, "configuration"), stats.ok,
             stats.out_of_memory, stats.invalid,
             stats.errors ? fmt::format(", {}", counted(stats.errors, "internal error")) : "");
  if (stats.reused_steps > 0)
    fmt::print("  {} of the ok steps are their ZeRO-1/ZeRO-2 twin's, simulated once (models::step_zero_stage)\n",
               stats.reused_steps);
  for (const auto& [n, reason] : reasons.most_common(3)) fmt::print("  {} like: {}\n", n, reason);
  if (a.top > 0) {
    const auto rows = top.rows();
    if (rows.empty()) {
      fmt::print("no ok configuration has a {} to rank by{}\n", name(by),
                 by == RankBy::days || by == RankBy::cost ? " (set training.tokens)" : "");
    } else {
      fmt::print("\ntop {} by {}:\n{}", rows.size(), name(by), format_top_table(header, space.columns(), rows));
    }
  }
  // As plan does when nothing meets the deadline: a script must not mistake an all-invalid sweep for results.
  if (stats.ok == 0) {
    fmt::print(stderr, "sweep: none of the {} configurations is ok\n", stats.evaluated);
    return 3;
  }
  return 0;
}

// ---- merge ----

struct MergeArgs {
  std::vector<std::string> inputs;
  std::string out, by = "mfu";
  std::size_t top = 10;
};

struct ShardReader {
  std::string path;
  std::ifstream in;
  std::string line;
  std::uint64_t index = 0;
  bool next() {
    if (!std::getline(in, line)) return false;
    if (line.empty()) return next();
    // Both formats start a row with its index: CSV "123,..." and JSON lines {"index":123,...}.
    const auto digits = line.find_first_of("0123456789");
    if (digits == std::string::npos) throw ScenarioError(fmt::format("{}: a row has no index: {}", path, line.substr(0, 80)));
    index = std::stoull(line.substr(digits));
    return true;
  }
};

// One JSON line of a sweep shard as cells in CSV column order. The first line fixes the columns
// (`header`: config keys, then result keys unprefixed) and the config columns.
std::vector<std::string> json_row_cells(const std::string& line, std::vector<std::string>* header,
                                        std::vector<std::string>* config_columns) {
  std::vector<std::pair<std::string, std::string>> flat = flatten_json(line);
  if (header->empty()) {
    for (auto& [k, v] : flat)
      if (k.rfind("config.", 0) == 0) config_columns->push_back(k.substr(7));
    *header = {"index"};
    header->insert(header->end(), config_columns->begin(), config_columns->end());
    header->insert(header->end(), {"status", "reason"});
    header->insert(header->end(), metric_columns().begin(), metric_columns().end());
    header->insert(header->end(), {"gpu_hours", "cost_usd"});
  }
  std::vector<std::string> cells(header->size());
  for (auto& [k, v] : flat) {
    const bool prefixed = k.rfind("config.", 0) == 0 || k.rfind("result.", 0) == 0;
    if (const auto at = column_of(*header, prefixed ? k.substr(7) : k)) cells[*at] = v == "null" ? "" : v;
  }
  return cells;
}

int run_merge_command(const MergeArgs& a) {
  std::vector<std::unique_ptr<ShardReader>> readers;
  std::optional<std::string> header_line;
  bool json_lines = false;
  for (const auto& path : a.inputs) {
    auto r = std::make_unique<ShardReader>();
    r->path = path;
    r->in.open(path, std::ios::binary);
    if (!r->in) throw ScenarioError(fmt::format("{}: cannot open", path));
    const bool is_json = r->in.peek() == '{';
    if (&path != &a.inputs.front() && is_json != json_lines)
      throw ScenarioError(fmt::format("{}: mixes CSV and JSON-lines shards", path));
    json_lines = is_json;
    if (!is_json) {
      std::string h;
      std::getline(r->in, h);
      if (header_line && h != *header_line)
        throw ScenarioError(fmt::format("{}: its header differs from {}'s; shards of one sweep share it", path, a.inputs.front()));
      header_line = h;
    }
    if (r->next()) readers.push_back(std::move(r));
  }
  std::vector<std::string> header = header_line ? parse_csv_line(*header_line) : std::vector<std::string>{};
  std::vector<std::string> config_columns;
  std::optional<OutputFile> out;
  if (!a.out.empty()) {
    out.emplace(a.out);
    if (header_line) out->stream() << *header_line << '\n';
  }
  std::optional<TopK> top;
  std::optional<FigureColumns> figures;
  std::uint64_t rows = 0, missing = 0, expected = 0;
  auto cells_of = [&](const std::string& line) {
    return json_lines ? json_row_cells(line, &header, &config_columns) : parse_csv_line(line);
  };
  while (!readers.empty()) {
    // Shards are written in index order, so the smallest current row comes next (k-way merge).
    auto it = std::min_element(readers.begin(), readers.end(), [](const auto& x, const auto& y) { return x->index < y->index; });
    ShardReader& r = **it;
    if (rows > 0 && r.index < expected)
      throw ScenarioError(fmt::format("{}: configuration {} appears twice (overlapping shards?)", r.path, r.index));
    missing += r.index - expected;
    expected = r.index + 1;
    ++rows;
    if (out) out->stream() << r.line << '\n';
    if (a.top > 0) {
      auto cells = cells_of(r.line);
      if (!top) {
        top.emplace(parse_rank_by(a.by), a.top);
        figures.emplace(header);
        if (!json_lines) {
          const auto s = column_of(header, "status");
          for (std::size_t i = 1; s && i < *s; ++i) config_columns.push_back(header[i]);
        }
      }
      top->offer(r.index, figures->read(cells), cells);
    }
    if (!r.next()) readers.erase(it);
  }
  if (out) out->commit();
  fmt::print("merged {} rows from {} files{}\n", rows, a.inputs.size(),
             missing ? fmt::format("; {} configurations below index {} are missing (a shard not run?)", missing, expected)
                     : "");
  if (top) {
    const auto ranked = top->rows();
    if (!ranked.empty())
      fmt::print("\ntop {} by {}:\n{}", ranked.size(), a.by, format_top_table(header, config_columns, ranked));
  }
  return missing ? 3 : 0;
}

}  // namespace

Subcommand add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  auto* c = app.add_subcommand("sweep", "simulate the cartesian product of scenario variations (CSV, JSON lines, top-k)");
  c->add_option("scenario", args->scenario, "base scenario YAML file")->required();
  c->add_option("--vary", args->vary,
                "key=v1,v2 | key=1..8 (doubling) | key=256..4096:x2 | key=0..64:+8; repeat for a product")
      ->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  c->add_option("--set", args->sets, "fix a key in every configuration: --set training.seq_len=8192")
      ->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  c->add_flag("--auto-parallel", args->auto_parallel,
              "also enumerate every tp/pp/cp/vpp/schedule/micro_batch/zero_stage/recompute plan for the GPU count");
  c->add_option("--schedules", args->schedules,
                "with --auto-parallel: pipeline schedules searched where pp > 1, comma-separated "
                "(default 1f1b,zb-h1,interleaved; gpipe also allowed)");
  c->add_option("--csv", args->csv, "write every configuration and its metrics to this CSV file");
  c->add_option("--jsonl", args->jsonl, "write every configuration as one JSON object per line");
  c->add_option("--plot", args->plot, "write the --by metric against the first swept key as an SVG chart");
  c->add_option("--html", args->html, "write a self-contained HTML report: chart with the Pareto front, top table");
  c->add_option("--top", args->top, "print the best K configurations (0: none)")->capture_default_str();
  c->add_option("--by", args->by, "rank by mfu | step_time | days | cost")->capture_default_str();
  c->add_option("--threads", args->threads, "worker threads (0: every core)")->capture_default_str();
  c->add_option("--shard", args->shard, "evaluate slice i of n (0-based): configurations i, i+n, ...")->capture_default_str();
  c->add_option("--cost-per-gpu-hour", args->cost_per_gpu_hour, "price for the cost_usd column");
  c->add_flag("--no-progress", args->no_progress, "never draw the progress bar");
  return {c, [args] { return run_sweep_command(*args); }};
}

Subcommand add_merge_command(CLI::App& app) {
  auto args = std::make_shared<MergeArgs>();
  auto* c = app.add_subcommand("merge", "join the CSV (or JSON-lines) outputs of sweep shards in index order and re-rank");
  c->add_option("inputs", args->inputs, "shard output files")->required();
  c->add_option("--out", args->out, "write the merged rows here (same format as the inputs)");
  c->add_option("--top", args->top, "print the best K configurations (0: none)")->capture_default_str();
  c->add_option("--by", args->by, "rank by mfu | step_time | days | cost")->capture_default_str();
  return {c, [args] { return run_merge_command(*args); }};
}

}  // namespace clustersim::tools
