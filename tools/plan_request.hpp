#pragma once
// The options of `clustersim plan` as both front ends take them (the CLI's flags, the Python
// module's keywords), and the one function that turns them into the studies::PlanRequest they run.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "studies/plan_costs.hpp"
#include "studies/plan_search.hpp"

namespace clustersim::tools {

struct PlanOptions {
  std::string model;
  std::string tokens;  ///< a count with an optional SI suffix: 15e12, 15T
  std::vector<std::string> hardware{"h100-sxm"};  ///< one name per entry, or comma lists as --hardware takes them
  double days = 0;
  int seq_len = 4096;
  std::optional<int> global_batch;  ///< none: 4 Mi tokens / seq_len
  std::string batch_tokens;        ///< "4M..16M": search the global batch; "": the one global batch
  std::string prices;              ///< per GPU-hour: "2.5" or "h100-sxm=2.5,gb200=6"; "": none
  double cost_per_gpu_hour = 0;    ///< every hardware, where `prices` has no entry
  studies::EnergyOptions energy;
  std::string by = "cost";         ///< cost, days or gpus
  int max_vpp = 8;
  std::string schedules = "1f1b,interleaved";  ///< pipeline schedules searched (pp > 1): studies::kPlanDefaultSchedules
  double confidence = 0;
  std::optional<int> max_gpus;      ///< none: 8x the 100 %-MFU bound
  std::optional<int> gpu_step;      ///< none: GPUs per node
  std::vector<std::string> fixes;  ///< "key=value"
  long long top = 10;
  int threads = 0;
};

/// The request both front ends run; throws scenarios::ScenarioError naming the option
/// (--tokens, --global-batch, --gpu-step, --max-gpus, --top, --threads, --cost-per-gpu-hour,
/// --batch-tokens, --by) on a bad value, with the message the CLI prints.
studies::PlanRequest plan_request(const PlanOptions& options);

/// The line both front ends give when no plan meets the deadline (the CLI's exit code 3).
std::string no_plan_message(const studies::PlanRequest& request);

}  // namespace clustersim::tools
