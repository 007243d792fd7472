#include "scenarios/simulate.hpp"

namespace clustersim::scenarios {

Report simulate(const Scenario& sc) {
  Report r;
  r.scenario = sc;
  const auto& t = sc.training;
  r.num_gpus = sc.cluster.gpus;
  r.params = models::count_params(sc.model, t.seq_len);
  r.flops = models::flops_per_token(sc.model, t);
  r.peak_flops = sc.gpu.peak(t.precision);
  r.costs = models::step_costs(sc.model, t, sc.parallel, sc.gpu);
  r.step = models::simulate_step(sc.model, t, sc.parallel, sc.gpu, r.costs);
  r.memory_per_stage = models::estimate_memory_per_stage(sc.model, t, sc.parallel, sc.gpu);
  r.memory = models::estimate_memory(sc.model, t, sc.parallel, sc.gpu);
  r.tokens_per_step = double(t.global_batch) * t.seq_len;
  r.step_time_s = r.step.step_time_s;
  r.tokens_per_s = r.tokens_per_step / r.step_time_s;
  r.tokens_per_s_per_gpu = r.tokens_per_s / r.num_gpus;
  r.tflops_per_gpu = r.flops.model * r.tokens_per_s_per_gpu / 1e12;
  r.mfu = r.flops.model * r.tokens_per_s_per_gpu / r.peak_flops;
  r.hfu = r.flops.hardware * r.tokens_per_s_per_gpu / r.peak_flops;
  r.days_to_train = t.tokens > 0 ? t.tokens / r.tokens_per_s / 86400.0 : 0.0;
  return r;
}

}  // namespace clustersim::scenarios
