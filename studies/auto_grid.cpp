#include "studies/auto_grid.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <exception>

#include "scenarios/error.hpp"

namespace clustersim::studies {

PlanGrid auto_parallel_grid(const scenarios::ScenarioTemplate& base, const std::vector<Axis>& axes,
                            const std::vector<std::string>& sets) {
  PlanGrid grid;
  for (const auto& a : axes)
    if (a.key == "model" || a.key.rfind("model.", 0) == 0) return grid;
  try {
    grid.layers = base.instantiate(sets).model.layers;
  } catch (const std::exception&) {
    grid.layers = 0;
  }
  return grid;
}

SweepSpace sweep_space_for(const scenarios::ScenarioTemplate& base, const std::vector<Axis>& axes, bool auto_parallel,
                           const std::vector<std::string>& sets, const std::string& schedules) {
  int base_gpus = 0;
  if (const auto g = base.scalar_at("cluster.gpus")) base_gpus = std::atoi(g->c_str());
  PlanGrid grid = auto_parallel_grid(base, axes, sets);
  if (!schedules.empty()) {
    if (!auto_parallel)
      throw scenarios::ScenarioError(fmt::format("--schedules {}: the schedules are searched with --auto-parallel; "
                                                 "without it set one with --set parallelism.schedule=NAME", schedules));
    grid.schedules = parse_schedules(schedules, "--schedules " + schedules);
  }
  if (auto_parallel) {
    set_model_grid(base, sets, &grid);  // MoE models also search ep / etp
    bool modules = base.has("training.recompute_modules");
    for (const auto& s : sets)
      if (s.rfind("training.recompute_modules=", 0) == 0) modules = s != "training.recompute_modules=null";
    grid.drop_recompute_modules = modules;
    // The base's model is not every row's when an axis varies it: the loader judges each row.
    for (const auto& a : axes)
      if (a.key == "model" || a.key.rfind("model.", 0) == 0) grid.model.reset();
  }
  return SweepSpace(axes, auto_parallel, sets, base_gpus, grid);
}

}  // namespace clustersim::studies
