#include "studies/auto_grid.hpp"

#include <exception>

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

}  // namespace clustersim::studies
