#include "python/bindings.hpp"

#include <cstdlib>

#include "scenarios/explain.hpp"
#include "scenarios/load.hpp"
#include "scenarios/scenario_template.hpp"
#include "scenarios/simulate.hpp"
#include "scenarios/quantity.hpp"
#include "studies/auto_grid.hpp"
#include "validation/conventions.hpp"
#include "studies/csv_table.hpp"
#include "studies/plan_batch.hpp"
#include "studies/plan_search.hpp"
#include "validation/validation.hpp"
#include "validation/validation_run.hpp"
#include "reporters/explain_report.hpp"
#include "reporters/plan_json.hpp"
#include "reporters/validation_report.hpp"
#include "reporters/report.hpp"
#include "studies/sweep_engine.hpp"
#include "studies/sweep_space.hpp"
#include "studies/memory_advice.hpp"
#include "tools/sweep_request.hpp"

namespace clustersim::python {

std::string run_json(const ScenarioInput& in, const std::vector<std::string>& sets, bool explain, bool strict) {
  const scenarios::Scenario sc = in.is_path ? scenarios::load_scenario_file(in.text, sets)
                                            : scenarios::load_scenario_string(in.text, "<dict>", sets);
  const scenarios::Report report = scenarios::simulate(sc);
  if (strict && !report.memory.fits()) throw ScenarioError(studies::memory_error(report));
  if (!explain) return reporters::format_json(report);
  const scenarios::Explanation ex = scenarios::explain(sc, report);
  return reporters::format_json(report, {{"explain", reporters::format_explain_json(ex, report)}});
}

SweepTable sweep_table(const ScenarioInput& in, const std::vector<std::string>& axes, bool auto_parallel,
                       const std::vector<std::string>& sets, int threads, const std::string& schedules) {
  const auto base = in.is_path ? scenarios::ScenarioTemplate::from_file(in.text) : scenarios::ScenarioTemplate(in.text, "<dict>");
  const tools::SweepSetup setup =  // as `clustersim sweep`, with its checks
      tools::sweep_setup(base, in.is_path ? in.text : "<dict>", axes, auto_parallel, sets, schedules, threads);
  const studies::SweepSpace& space = setup.space;
  studies::SweepOptions options;
  options.threads = threads;
  SweepTable table{studies::sweep_header(space), {}};
  studies::run_sweep(base, space, options, [&](const studies::Row& r) { table.rows.push_back(r.cells); });
  return table;
}

std::string validate_json(const std::string& csv, const std::string& source, const std::string& group_by) {
  const studies::CsvTable table = csv.empty() ? studies::parse_csv(studies::published_csv_text(), "data/validation/published.csv")
                                              : studies::read_csv_file(csv);
  const studies::ValidationRun run = studies::run_validation(table, csv.empty() ? "published.csv" : csv, source, group_by);
  return reporters::format_validation_json(run.summary, run.groups ? &*run.groups : nullptr);
}

std::string plan_json(const PlanInput& in, bool strict) {
  const studies::PlanRequest req = tools::plan_request(in);  // as `clustersim plan`
  const studies::PlanResult res = studies::search_plans(req);
  if (strict && res.cheapest.empty()) throw ScenarioError(tools::no_plan_message(req));
  return reporters::plan_json(req, res);
}

const char* version() { return CLUSTERSIM_VERSION; }

}  // namespace clustersim::python
