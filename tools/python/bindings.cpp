#include "python/bindings.hpp"

#include <cstdlib>

#include "scenarios/explain.hpp"
#include "scenarios/load.hpp"
#include "scenarios/scenario_template.hpp"
#include "scenarios/simulate.hpp"
#include "tools/explain_report.hpp"
#include "tools/report.hpp"
#include "studies/sweep_engine.hpp"
#include "studies/sweep_space.hpp"

namespace clustersim::python {

std::string run_json(const ScenarioInput& in, const std::vector<std::string>& sets, bool explain) {
  const scenarios::Scenario sc = in.is_path ? scenarios::load_scenario_file(in.text, sets)
                                            : scenarios::load_scenario_string(in.text, "<dict>", sets);
  const scenarios::Report report = scenarios::simulate(sc);
  if (!explain) return tools::format_json(report);
  const scenarios::Explanation ex = scenarios::explain(sc, report);
  return tools::format_json(report, {{"explain", tools::format_explain_json(ex, report)}});
}

SweepTable sweep_table(const ScenarioInput& in, const std::vector<std::string>& axes, bool auto_parallel,
                       const std::vector<std::string>& sets, int threads) {
  const auto base = in.is_path ? scenarios::ScenarioTemplate::from_file(in.text) : scenarios::ScenarioTemplate(in.text, "<dict>");
  std::vector<studies::Axis> parsed;
  for (const auto& a : axes) parsed.push_back(studies::parse_axis(a));
  int base_gpus = 0;
  if (const auto g = base.scalar_at("cluster.gpus")) base_gpus = std::atoi(g->c_str());
  const studies::SweepSpace space(parsed, auto_parallel, sets, base_gpus);
  studies::SweepOptions options;
  options.threads = threads;
  SweepTable table{studies::sweep_header(space), {}};
  studies::run_sweep(base, space, options, [&](const studies::Row& r) { table.rows.push_back(r.cells); });
  return table;
}

const char* version() { return CLUSTERSIM_VERSION; }

}  // namespace clustersim::python
