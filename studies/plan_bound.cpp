#include "studies/plan_bound.hpp"

#include <algorithm>

#include "models/step_bound.hpp"
#include "scenarios/simulate.hpp"
#include "studies/sweep_engine.hpp"

namespace clustersim::studies {

namespace {

// The pass bound on the costs scenarios::simulate() uses, else the kernel floor.
double pass_bound_s(const scenarios::Scenario& sc, const models::StepCosts& c) {
  const auto bound = models::step_pass_bound_s(sc.model, sc.training, sc.parallel, sc.gpu, c, scenarios::network_of(sc));
  return bound ? *bound : models::step_kernel_floor_s(sc.model, sc.training, sc.parallel, c);
}

}  // namespace

double plan_step_lower_bound_s(const scenarios::Scenario& sc) {
  const auto c = models::step_costs(sc.model, sc.training, sc.parallel, sc.gpu);
  const auto bound = models::step_pipeline_bound_s(sc.model, sc.training, sc.parallel, sc.gpu, c);
  return bound ? *bound : models::step_kernel_floor_s(sc.model, sc.training, sc.parallel, c);
}

double plan_step_network_bound_s(const scenarios::Scenario& sc) { return pass_bound_s(sc, scenarios::step_costs_of(sc)); }

double plan_step_screen_bound_s(const scenarios::Scenario& sc, bool* passes) {
  // The costs the simulation runs (with the batch upload): every bound below holds for them.
  const auto c = scenarios::step_costs_of(sc);
  *passes = false;
  if (const auto bound = models::step_pipeline_bound_s(sc.model, sc.training, sc.parallel, sc.gpu, c)) return *bound;
  const double floor = models::step_kernel_floor_s(sc.model, sc.training, sc.parallel, c);
  const double pass = pass_bound_s(sc, c);
  *passes = pass > floor;
  return std::max(floor, pass);
}

}  // namespace clustersim::studies
