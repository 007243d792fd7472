#pragma once
// The options of `clustersim plan` as both front ends take them (the CLI's flags, the Python
// module's keywords), and the one function that turns them into the studies::PlanRequest they run.
#include <cstddef>
#include <string>
#include <vector>

#include "studies/plan_costs.hpp"
#include "studies/plan_search.hpp"

namespace clustersim::tools {

struct PlanOptions {
  std::string model;
  std::string tokens;  ///< a count with an optional SI suffix: 15e12, 15T
  std::vector<std::string> hardware{"h100-sxm"};
  double days = 0;
  int seq_len = 4096;
  int global_batch = 0;            ///< 0: 4 Mi tokens / seq_len
  std::string batch_tokens;        ///< "4M..16M": search the global batch; "": the one global batch
  std::string prices;              ///< per GPU-hour: "2.5" or "h100-sxm=2.5,gb200=6"; "": none
  double cost_per_gpu_hour = 0;    ///< every hardware, where `prices` has no entry
  studies::EnergyOptions energy;
  std::string by = "cost";         ///< cost, days or gpus
  int max_vpp = 8;
  std::string schedules = "1f1b,interleaved";  ///< pipeline schedules searched (pp > 1): studies::kPlanDefaultSchedules
  double confidence = 0;
  int max_gpus = 0, gpu_step = 0;
  std::vector<std::string> fixes;  ///< "key=value"
  std::size_t top = 10;
  int threads = 0;
};

/// The request both front ends run; throws scenarios::ScenarioError naming the option
/// (--tokens, --cost-per-gpu-hour, --batch-tokens, --by) on bad text.
studies::PlanRequest plan_request(const PlanOptions& options);

}  // namespace clustersim::tools
