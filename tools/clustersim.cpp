// The clustersim command line. Exit codes: 0 success, 2 bad input, 3 plan does not fit in
// memory (the report is still printed), 1 internal error.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "hardware/csv.hpp"
#include "scenarios/error.hpp"
#include "scenarios/explain.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"
#include "tools/output_file.hpp"
#include "reporters/explain_report.hpp"
#include "reporters/html_report.hpp"
#include "tools/mfu_command.hpp"
#include "tools/collective_command.hpp"
#include "reporters/report.hpp"
#include "tools/subcommands.hpp"
#include "reporters/trace.hpp"
#include "tools/allocator_tuning.hpp"
#include "validation/calibrate.hpp"
#include "studies/memory_advice.hpp"
#include "validation/conventions.hpp"
#include "validation/validation.hpp"
#include "validation/validation_run.hpp"
#include "reporters/validation_report.hpp"

namespace {

struct RunOptions {
  std::string scenario;
  std::vector<std::string> sets;
  bool json = false;
  bool explain = false;
  std::string plot;
  std::string trace;
  int trace_micro_batches = -1;  ///< -1: every micro-batch's kernels
  std::string html;
  int monte_carlo = 0;
  std::uint64_t seed = 1;
};

// --trace: streamed to the file; a warning first when it will be large (over 100 MB).
void write_trace(const RunOptions& opt, const std::vector<clustersim::models::TimelineEntry>& timeline,
                 const clustersim::scenarios::Report& report) {
  using namespace clustersim;
  const reporters::TraceOptions options{opt.trace_micro_batches};
  constexpr double kLargeTraceBytes = 100e6;
  if (const auto size = reporters::trace_size(timeline, report, options); size.bytes > kLargeTraceBytes) {
    const auto one = reporters::trace_size(timeline, report, {1});
    fmt::print(stderr, "warning: --trace {}: writing about {:.0f} MB ({} events){}\n", opt.trace, size.bytes / 1e6, size.events,
               opt.trace_micro_batches < 0 || opt.trace_micro_batches > 1
                   ? fmt::format("; --trace-micro-batches 1 keeps one micro-batch in full and folds the rest (about {:.0f} MB)", one.bytes / 1e6)
                   : "");
  }
  tools::OutputFile file(opt.trace);
  reporters::write_chrome_trace(file.stream(), timeline, report, options);
  file.commit();
}

int run_command(const RunOptions& opt) {
  using namespace clustersim;
  const scenarios::Scenario sc = scenarios::load_scenario_file(opt.scenario, opt.sets);
  if (const std::string w = scenarios::hardware_topology_warning(sc); !w.empty()) fmt::print(stderr, "{}\n", w);
  if (opt.monte_carlo > 0 && !(sc.training.tokens > 0))
    throw scenarios::ScenarioError(fmt::format("--monte-carlo {}: replays the whole training run, which needs training.tokens "
                                               "(e.g. --set training.tokens=1e12); {} has none", opt.monte_carlo, opt.scenario));
  scenarios::Report report = scenarios::simulate(sc);
  std::vector<models::TimelineEntry> timeline;
  if (!opt.trace.empty() || !opt.html.empty()) {
    // The timeline is the same step simulated kernel by kernel (one task per kernel group and
    // transfer); the report stays the merged-pass simulation every other command uses.
    scenarios::simulate(sc, &timeline);
    if (!opt.trace.empty()) write_trace(opt, timeline, report);
  }
  if (opt.monte_carlo > 0) scenarios::add_monte_carlo(report, opt.monte_carlo, opt.seed);
  std::optional<scenarios::Explanation> explained;
  if (opt.explain || !opt.html.empty()) explained = scenarios::explain(sc, report);
  if (!opt.html.empty()) tools::write_file_atomically(opt.html, reporters::run_html(report, *explained, timeline));
  std::string out;
  if (opt.explain) {
    const scenarios::Explanation& ex = *explained;
    out = opt.json ? reporters::format_json(report, {{"explain", reporters::format_explain_json(ex, report)}})
                   : reporters::format_text(report) + reporters::format_explain_text(ex, report);
    if (!opt.plot.empty()) tools::write_file_atomically(opt.plot, reporters::waterfall_svg(ex, report));
  } else {
    out = opt.json ? reporters::format_json(report) : reporters::format_text(report);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (!report.memory.fits()) {
    fmt::print(stderr, "error: {}\n", studies::memory_error(report));
    return 3;
  }
  return 0;
}

// The published runs: the compiled-in data/validation/published.csv unless --csv names a file.
clustersim::studies::CsvTable load_runs(const std::string& csv) {
  using namespace clustersim;
  return csv.empty() ? studies::parse_csv(studies::published_csv_text(), "data/validation/published.csv")
                     : studies::read_csv_file(csv);
}

// `validate --scenario`: each matching row as the scenario YAML it is simulated from (run it with
// `clustersim run FILE --explain`), or the reason it is not simulated; nothing is simulated.
int print_row_scenarios(const clustersim::studies::CsvTable& table, const std::string& csv, const std::string& prefix) {
  using namespace clustersim;
  std::string out;
  for (const auto& row : table.rows) {
    const auto id = row.find("id");
    if (id == row.end() || id->second.rfind(prefix, 0) != 0) continue;
    const studies::RowScenario rs = studies::row_scenario(row);
    out += fmt::format("{}# {}{}\n", out.empty() ? "" : "---\n", id->second,
                       rs.reason.empty() ? "" : ": not simulated: " + rs.reason);
    for (const auto& a : rs.assumptions) out += "# assumed: " + a + "\n";
    for (const auto& f : rs.flags) out += "# flagged: " + f + "\n";
    out += rs.scenario.yaml();
  }
  if (out.empty()) throw scenarios::ScenarioError(fmt::format("{}: no row id starts with '{}'", csv, prefix));
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

struct ValidateOptions {
  std::string csv, prefix, plot, group_by;
  bool json = false, moe = false, scenario = false;
};

int validate_command(const ValidateOptions& v) {
  using namespace clustersim;
  const studies::CsvTable table =
      v.moe ? studies::parse_csv(studies::published_moe_csv_text(), "data/validation/published_moe.csv") : load_runs(v.csv);
  const std::string file = v.csv.empty() ? (v.moe ? "published_moe.csv" : "published.csv") : v.csv;  // for errors
  if (v.scenario) return print_row_scenarios(table, file, v.prefix);
  const studies::ValidationRun run = studies::run_validation(table, file, v.prefix, v.group_by);
  const studies::ResidualGroups* groups = run.groups ? &*run.groups : nullptr;
  std::string out = v.json ? reporters::format_validation_json(run.summary, groups)
                           : reporters::format_validation_text(run.summary);
  if (groups && !v.json) out += reporters::format_groups_text(*groups);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (!v.plot.empty()) {
    std::FILE* f = std::fopen(v.plot.c_str(), "wb");
    if (!f) throw scenarios::ScenarioError(fmt::format("{}: cannot write the plot", v.plot));
    const std::string svg = reporters::validation_svg(run.summary);
    std::fwrite(svg.data(), 1, svg.size(), f);
    std::fclose(f);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  clustersim::tools::keep_freed_memory_for_reuse();
  CLI::App app{"clustersim: predicts step time, throughput, MFU and memory of large-model training"};
  app.set_version_flag("--version", std::string("clustersim ") + CLUSTERSIM_VERSION);
  app.require_subcommand(1);
  // One line, like every other bad-input error (CLI11's default adds a second, "Run with --help").
  app.failure_message([](const CLI::App*, const CLI::Error& e) { return fmt::format("error: {} (see --help)\n", e.what()); });
  RunOptions ro;
  auto* run = app.add_subcommand("run", "simulate one training step of a scenario");
  run->add_option("scenario", ro.scenario, "scenario YAML file")->required();
  run->add_option("--set", ro.sets, "override a scenario key: --set training.micro_batch=2")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run->add_flag("--json", ro.json, "print one JSON object (SI units) instead of the summary");
  run->add_flag("--explain", ro.explain, "add the MFU-loss waterfall, the top kernels' roofline and advice");
  auto* plot = run->add_option("--plot", ro.plot, "with --explain: write the waterfall as an SVG chart");
  plot->needs(run->get_option("--explain"));
  auto* trace = run->add_option("--trace", ro.trace, "write the simulated step as Chrome trace JSON (open in Perfetto)");
  run->add_option("--trace-micro-batches", ro.trace_micro_batches,
                  "with --trace: every task and kernel of the first N micro-batches; the later ones (the steady state) "
                  "folded into one slice per stream and pass")
      ->check(CLI::Range(0, 1000000))
      ->needs(trace);
  run->add_option("--html", ro.html, "write a self-contained HTML report (summary, waterfall, memory, timeline, roofline)");
  run->add_option("--monte-carlo", ro.monte_carlo, "replay the whole run N times with random failure times")
      ->check(CLI::Range(0, 1000000));
  run->add_option("--seed", ro.seed, "random seed for --monte-carlo (same seed, same output)")
      ->check([](const std::string& v) { return v.find('-') == std::string::npos ? "" : "a seed is a whole number >= 0"; });
  clustersim::tools::MfuOptions mo;
  auto* mfu = clustersim::tools::add_mfu_command(app, mo);
  clustersim::tools::CollectiveOptions collective_options;
  auto* collective = clustersim::tools::add_collective_command(app, collective_options);
  const auto subcommands = clustersim::tools::register_subcommands(app);
  ValidateOptions vo;
  auto* validate = app.add_subcommand("validate", "predict published training runs and report the error");
  validate->add_option("--csv", vo.csv, "published runs CSV (default: the project's data/validation/published.csv)");
  validate->add_option("--source", vo.prefix, "only rows whose id starts with this prefix, e.g. DGXC-L8B");
  validate->add_option("--plot", vo.plot, "write predicted vs measured (log-log SVG) to this file");
  validate->add_flag("--json", vo.json, "print JSON instead of the table");
  validate->add_flag("--moe", vo.moe, "the Mixture-of-Experts runs (the project's data/validation/published_moe.csv)")
      ->excludes(validate->get_option("--csv"));
  validate->add_flag("--scenario", vo.scenario,
                     "print each row's generated scenario YAML (with --source ID: one run to `run --explain`)")
      ->excludes(validate->get_option("--json"))
      ->excludes(validate->get_option("--plot"));
  validate->add_option("--group-by", vo.group_by,
                       "also report the headline rows' bias and MAPE per value of this CSV column "
                       "(e.g. pp, gpu_type, precision; parameter counts (*params_b) in 1-3-10 bins)")
      ->excludes(validate->get_option("--scenario"));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 answers a mistyped subcommand with "A subcommand is required": name the word and the choices.
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
    if (argc > 1 && argv[1][0] != '-' && std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      fmt::print(stderr, "error: unknown subcommand '{}'; the subcommands are: {}\n", argv[1], fmt::join(names, ", "));
      return 2;
    }
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (*run) return run_command(ro);
    if (*mfu) return clustersim::tools::run_mfu_command(mo);
    if (*collective) return clustersim::tools::run_collective(collective_options);
    for (const auto& sub : subcommands)
      if (*sub.app) return sub.run();
    if (*validate) return validate_command(vo);
  } catch (const clustersim::scenarios::ScenarioError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const clustersim::hardware::CsvError& e) {  // a malformed CSV file (--csv, --runs, merge)
    fmt::print(stderr, "error: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "internal error: {}\n", e.what());
    return 1;
  }
  return 0;
}
