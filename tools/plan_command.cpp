// `clustersim plan`: the arguments of studies::search_plans and the printing of its result
// (the cheapest plans that meet the deadline and the fastest plan for each GPU count).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <optional>

#include "scenarios/error.hpp"
#include "studies/counted.hpp"
#include "studies/plan_batch.hpp"
#include "studies/plan_search.hpp"
#include "studies/sweep_table.hpp"
#include "reporters/plan_json.hpp"
#include "tools/plan_request.hpp"
#include "reporters/html_report.hpp"
#include "tools/output_file.hpp"
#include "tools/progress.hpp"
#include "tools/subcommands.hpp"

namespace clustersim::tools {

using namespace studies;  // the library this front end prints
using namespace reporters;  // and the writers it prints with
namespace {

using scenarios::ScenarioError;

// The request's options (shared with the Python module) and what only the CLI has.
struct PlanArgs : PlanOptions {
  std::string hardware_list = "h100-sxm";  ///< --hardware, comma-separated
  bool json = false;
  std::string csv, html;
  bool no_progress = false;
};

// The energy and cost columns in the tables, after the sweep's figures.
const std::vector<std::string>& energy_columns() {
  static const std::vector<std::string> columns = {"energy_mwh", "total_cost_usd"};
  return columns;
}

// A plan's cells with the energy and cost figures rounded for a table.
std::vector<std::string> table_cells(const std::vector<std::string>& header, std::vector<std::string> cells) {
  for (const char* col : {"energy_mwh", "energy_cost_usd", "total_cost_usd"}) {
    std::string& cell = cells[*column_of(header, col)];
    if (!cell.empty()) cell = fmt::format("{:.4g}", std::stod(cell));
  }
  return cells;
}

}  // namespace

namespace {

// "cheapest plans meeting D days", "fastest ..." or "smallest ...", as --by ranks them.
std::string ranking_title(const studies::PlanRequest& req) {
  const char* which = req.rank == studies::PlanRank::days   ? "fastest"
                      : req.rank == studies::PlanRank::gpus ? "smallest"
                                                            : "cheapest";
  return fmt::format("{} plans meeting {:g} days", which, req.days);
}

// What the ranking orders by, for the line after the title.
std::string ranking_basis(const studies::PlanRequest& req, const studies::PlanResult& res) {
  const std::string cost = res.priced ? "total cost (GPU-hours x price + energy)" : "GPU-hours (no --cost-per-gpu-hour)";
  const std::string first =
      req.confidence > 0 ? "" : fmt::format("the deadline met at the high end of the {:g} % error band, then ",
                                            100 * studies::band_confidence(req));
  if (req.rank == studies::PlanRank::days) return first + "fewest days, then " + cost;
  if (req.rank == studies::PlanRank::gpus) return first + "fewest GPUs, then fewest days";
  return first + cost + ", then fewest days";
}

std::string cost_basis(const studies::PlanRequest& req, const studies::PlanResult& res) {
  std::string prices;
  for (const auto& hw : res.hardware) {
    const double p = studies::gpu_hour_price(req.prices, hw) > 0 ? studies::gpu_hour_price(req.prices, hw) : req.cost_per_gpu_hour;
    if (p > 0) prices += fmt::format("{}{} ${:g}", prices.empty() ? "" : ", ", hw, p);
  }
  const auto& e = req.energy;
  return fmt::format("costs: {}; energy at the board power of each profile plus {} per GPU for host and network, PUE {:g}, "
                     "${:g}/kWh", prices.empty() ? "no GPU-hour price" : "GPU-hour " + prices,
                     e.node_overhead_w >= 0 ? fmt::format("{:g} W", e.node_overhead_w)
                                            : fmt::format("{:.0f} %", 100 * e.node_overhead_fraction),
                     e.pue, e.price_per_kwh);
}

// Each listed plan's days at the high end of its error band, and whether that misses the deadline.
void print_band_lines(const studies::PlanRequest& req, const std::vector<studies::PlanCandidate>& meeting) {
  fmt::print("days at the pessimistic end of the {:g} % error band (days x its high factor){}:\n",
             100 * studies::band_confidence(req), req.confidence > 0 ? "" : "; plans that miss the deadline there rank last");
  for (std::size_t i = 0; i < meeting.size(); ++i)
    fmt::print("  {:>2}  {:.1f} days at worst{}; band from {}{}\n", i + 1, meeting[i].days_high,
               meeting[i].days_high > req.days ? fmt::format(" (misses {:g} days)", req.days) : "", meeting[i].band_basis,
               meeting[i].poorly_validated ? "  [poorly validated: few published runs like this plan]" : "");
}

// The plans each listed row stands for as well: same figures, settings with no effect.
void print_equivalents(const std::vector<std::string>& header, const std::vector<studies::PlanCandidate>& meeting) {
  bool any = false;
  for (std::size_t i = 0; i < meeting.size(); ++i) {
    if (meeting[i].equivalents.empty()) continue;
    if (!any) fmt::print("rows that stand for equivalent plans (the same step time, memory and cost; settings with no effect):\n");
    any = true;
    fmt::print("  {:>2}  also {}\n", i + 1, fmt::join(equivalent_settings(header, meeting[i]), "; "));
  }
}

void print_plan_text(const PlanArgs& a, const studies::PlanRequest& req, const studies::PlanResult& res) {
  const auto& stats = res.stats;
  const auto& header = res.header;
  const auto& meeting = res.cheapest;
  const auto& fastest = res.fastest_per_gpu_count;
  const auto& common = res.common_rejections;
  const double tokens = res.tokens;
  const bool batch_searched = res.batches.size() > 1 || !a.batch_tokens.empty();
  const std::string batch =
      batch_searched ? fmt::format("global batch searched among {} sequences ({:.4g} to {:.4g} Mi tokens/step)",
                                   fmt::join(res.batches, ", "), double(res.batches.front()) * a.seq_len / 1048576,
                                   double(res.batches.back()) * a.seq_len / 1048576)
                     : fmt::format("global batch {} ({:.3g} M tokens/step)", res.global_batch,
                                   double(res.global_batch) * a.seq_len / 1e6);
  fmt::print("plan: {} on {:.4g} tokens within {:g} days; seq {}, {}; hardware {}\n", a.model, tokens, a.days, a.seq_len,
             batch, fmt::join(res.hardware, ","));
  std::string sizes;
  for (const auto& [hw, s] : res.sizes_by_hardware) sizes += fmt::format("{}{} {}", sizes.empty() ? "" : ", ", s.size(), hw);
  fmt::print("searched {} ({}) from {} GPUs (the deadline at 100 % MFU), {} plans: {} simulated, {} skipped "
             "(could not win: bound on their step time), {} out of memory, {} invalid{}\n",
             counted(long(res.sizes.size()), "cluster size"), sizes, res.lowest_bound, stats.evaluated, stats.ok, stats.pruned, stats.out_of_memory,
             stats.invalid + stats.errors,
             res.unformable ? fmt::format(" (and {} size/batch/micro-batch combinations dp·micro_batch does not divide)",
                                          res.unformable) : "");
  if (res.widened_to > 0)
    fmt::print(
        "searched past the default ceiling of {} GPUs (8x the 100 % MFU count): no plan met the deadline below it "
        "and the fastest still gained from more GPUs, so up to {} GPUs (--max-gpus sets the ceiling)\n",
        8L * res.lowest_bound, res.widened_to);
  for (const auto& n : res.notes) fmt::print("not searched: {}\n", n);
  fmt::print("{}\n", cost_basis(req, res));
  std::vector<std::string> columns = plan_columns(batch_searched, header);
  for (const auto& c : energy_columns()) columns.push_back(c);
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : meeting) rows.push_back(table_cells(header, c.cells));
  if (rows.empty()) fmt::print("\n{}\n", no_plan_message(req));
  if (const std::string note = batch_binding_note(req, res); !note.empty()) fmt::print("{}\n", note);
  if (!rows.empty())
    fmt::print("\n{} by {}:\n{}", ranking_title(req), ranking_basis(req, res), format_top_table(header, columns, rows));
  if (!meeting.empty()) print_band_lines(req, meeting);
  print_equivalents(header, meeting);
  rows.clear();
  for (const auto& c : fastest) rows.push_back(table_cells(header, c.cells));
  if (!rows.empty()) fmt::print("\nfastest plan per GPU count:\n{}", format_top_table(header, columns, rows));
  if (meeting.empty() && !fastest.empty()) print_band_lines(req, fastest);  // how far off, with the band
  if (!common.empty()) {
    fmt::print("\nmost common reasons plans were rejected:\n");
    for (const auto& [n, reason] : common) fmt::print("  {} like: {}\n", n, reason);
  }
}

// --html: GPU-hours (or cost) against days for every simulated plan, with the Pareto front, and
// the tables the terminal prints.
void write_plan_html(const PlanArgs& a, const studies::PlanRequest& req, const studies::PlanResult& res) {
  std::vector<std::string> columns = plan_columns(res.batches.size() > 1 || !a.batch_tokens.empty(), res.header);
  for (const auto& c : energy_columns()) columns.push_back(c);
  StudyHtml page(fmt::format("plan: {} on {:.4g} tokens within {:g} days", a.model, res.tokens, a.days), res.header,
                 columns, "gpu_hours", false);
  page.add_note(fmt::format("hardware {}; seq {}, global batch {}; {} plans: {} simulated, {} skipped by the bound, {} out "
                            "of memory, {} invalid", fmt::join(res.hardware, ","), a.seq_len,
                            fmt::join(res.batches, " or "), res.stats.evaluated, res.stats.ok, res.stats.pruned,
                            res.stats.out_of_memory, res.stats.invalid + res.stats.errors));
  page.add_note(cost_basis(req, res));
  page.mark_x(a.days, fmt::format("deadline {:g} days", a.days));
  for (const auto& row : res.all_rows) page.offer(row);
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : res.cheapest) rows.push_back(table_cells(res.header, c.cells));
  page.add_note("plans ranked by " + ranking_basis(req, res));
  page.add_table(ranking_title(req), rows);
  rows.clear();
  for (const auto& c : res.fastest_per_gpu_count) rows.push_back(table_cells(res.header, c.cells));
  page.add_table("fastest plan per GPU count", rows);
  write_file_atomically(a.html, page.render());
}

int run_plan_command(const PlanArgs& a) {
  PlanOptions options = a;
  options.hardware = {a.hardware_list};  // split at commas by plan_request, as Python's
  studies::PlanRequest req = plan_request(options);
  req.keep_all_rows = !a.csv.empty() || !a.html.empty();
  const bool progress = !a.no_progress && stderr_is_terminal();
  std::optional<OutputFile> csv;
  if (!a.csv.empty()) csv.emplace(a.csv);
  ProgressBar screen_bar("plan: checking plans ", progress), sim_bar("plan: simulating plans", progress);
  int phase = 0;
  const studies::PlanResult res = studies::search_plans(req, [&](int p, std::uint64_t done, std::uint64_t total) {
    if (p != phase) screen_bar.finish(), phase = p;
    (p == 0 ? screen_bar : sim_bar).update(done, total);
  });
  if (phase == 0) screen_bar.finish();
  sim_bar.finish();
  if (csv) {
    csv->stream() << csv_line(res.header);
    for (const auto& row : res.all_rows) csv->stream() << csv_line(row);
  }
  fmt::print(stderr, "plan: {} in {:.2f} s on {}: {} simulated, {} skipped by the bound\n",
             counted(res.stats.evaluated, "plan"), res.stats.wall_s, counted(res.stats.threads, "thread"), res.stats.ok,
             res.stats.pruned);
  if (a.json) fmt::print("{}", plan_json(req, res));
  else print_plan_text(a, req, res);
  if (!a.html.empty()) write_plan_html(a, req, res);
  if (csv) csv->commit();
  return res.cheapest.empty() ? 3 : 0;
}

}  // namespace

Subcommand add_plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArgs>();
  auto* c = app.add_subcommand("plan", "find the cluster size and parallelism plan that train a model within a deadline");
  c->add_option("--model", args->model, "model preset, e.g. llama3-70b")->required();
  c->add_option("--tokens", args->tokens, "training tokens, e.g. 15e12 or 15T")->required();
  c->add_option("--hardware", args->hardware_list, "hardware profile(s), comma-separated: h100-sxm,b200")->capture_default_str();
  c->add_option("--days", args->days, "deadline in days")->required();
  c->add_option("--seq-len", args->seq_len, "sequence length")->capture_default_str();
  c->add_option("--global-batch", args->global_batch, "sequences per step (default: 4 Mi tokens / seq-len)");
  c->add_option("--batch-tokens", args->batch_tokens,
                 "search the global batch: tokens per step LO..HI, e.g. 4M..16M (k = 2^10, M = 2^20 tokens)");
  c->add_option("--cost-per-gpu-hour", args->prices,
                "US dollars per GPU-hour: one price for all, or per hardware: h100-sxm=2.5,gb200=6");
  c->add_option("--node-overhead-w", args->energy.node_overhead_w,
                "watts per GPU for its share of host CPUs, memory, NICs, switches (default: a fraction of board power)");
  c->add_option("--node-overhead-fraction", args->energy.node_overhead_fraction,
                "host/network power per GPU as a fraction of its board power (DGX H100: 10.2 kW for 8 x 700 W)")
      ->capture_default_str();
  c->add_option("--pue", args->energy.pue, "facility power / IT power")->capture_default_str();
  c->add_option("--price-per-kwh", args->energy.price_per_kwh, "US dollars per kWh at the meter")->capture_default_str();
  c->add_option("--by", args->by, "rank the plans meeting the deadline by cost, days or gpus")->capture_default_str();
  c->add_option("--confidence", args->confidence,
                "require the deadline at the pessimistic end of the error band at this confidence, e.g. 0.9");
  c->add_option("--max-vpp", args->max_vpp, "largest vpp searched (every vpp with pp·vpp dividing the layers)")
      ->capture_default_str();
  c->add_option("--schedules", args->schedules,
                "pipeline schedules searched where pp > 1, comma-separated: 1f1b, zb-h1, interleaved (vpp > 1), gpipe; zb-h1 is opt-in (about 1.5x the search time)")
      ->capture_default_str();
  c->add_option("--max-gpus", args->max_gpus, "largest cluster to consider (default: 8x the 100 %-MFU bound)");
  c->add_option("--gpu-step", args->gpu_step,
                "cluster sizes are multiples of this (default: GPUs per node; 4, a compute tray, on NVL72 racks)");
  c->add_option("--fix", args->fixes, "fix a key in every plan: --fix parallelism.tp=8")
      ->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  c->add_flag("--json", args->json, "print one JSON object");
  c->add_option("--csv", args->csv, "write every plan evaluated to this CSV file");
  c->add_option("--html", args->html, "write a self-contained HTML report: days vs cost with the Pareto front, the tables");
  c->add_option("--top", args->top, "how many cheapest plans to list")->capture_default_str();
  c->add_option("--threads", args->threads, "worker threads (0: every core)")->capture_default_str();
  c->add_flag("--no-progress", args->no_progress, "never draw the progress bar");
  return {c, [args] { return run_plan_command(*args); }};
}

}  // namespace clustersim::tools
