#include "studies/plan_bound.hpp"

#include "models/step_bound.hpp"
#include "scenarios/simulate.hpp"
#include "studies/sweep_engine.hpp"

namespace clustersim::studies {

double plan_step_lower_bound_s(const scenarios::Scenario& sc) {
  const auto c = models::step_costs(sc.model, sc.training, sc.parallel, sc.gpu);
  const auto bound = models::step_pipeline_bound_s(sc.model, sc.training, sc.parallel, sc.gpu, c);
  return bound ? *bound : models::step_kernel_floor_s(sc.model, sc.training, sc.parallel, c);
}

double plan_step_network_bound_s(const scenarios::Scenario& sc) {
  // The costs and network scenarios::simulate() builds for this scenario.
  const auto c = scenarios::step_costs_of(sc);
  const auto bound =
      models::step_pass_bound_s(sc.model, sc.training, sc.parallel, sc.gpu, c, scenarios::network_of(sc));
  return bound ? *bound : step_time_lower_bound_s(sc);
}

}  // namespace clustersim::studies
