#pragma once
// Scenario → Report: the composition root that runs the models on the engine.
#include <vector>

#include "models/flops.hpp"
#include "models/layer_ops.hpp"
#include "models/memory.hpp"
#include "models/step.hpp"
#include "scenarios/scenario.hpp"

namespace clustersim::scenarios {

struct Report {
  Scenario scenario;
  int num_gpus = 0;
  models::ParamCount params;
  models::FlopsPerToken flops;
  double peak_flops = 0;           ///< per GPU, dense, for the training precision
  double tokens_per_step = 0;
  double step_time_s = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;                  ///< fraction of peak (model FLOPs)
  double hfu = 0;                  ///< fraction of peak (model + recompute FLOPs)
  double tflops_per_gpu = 0;       ///< model FLOP/s per GPU, in 1e12
  double days_to_train = 0;        ///< training.tokens / tokens_per_s (0 when no budget)
  models::MemoryEstimate memory;   ///< the pipeline stage with the highest peak
  std::vector<models::MemoryEstimate> memory_per_stage;
  models::StepCosts costs;
  models::StepResult step;
};

Report simulate(const Scenario& sc);

}  // namespace clustersim::scenarios
