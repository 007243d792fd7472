#pragma once
// One training step on a representative rank (all data-parallel replicas do the same work;
// DESIGN.md "symmetry reduction"): the task graph of micro-batches × blocks × passes plus
// data-parallel gradient/parameter collectives and the optimizer, run on the event engine.
#include <cstdint>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "models/layer_ops.hpp"
#include "models/model_spec.hpp"
#include "models/training_spec.hpp"
#include "sim/runner.hpp"
#include "sim/task_graph.hpp"
#include "topologies/network.hpp"

namespace clustersim::models {

enum class TaskKind : std::int32_t {
  forward, backward, recompute, optimizer, dp_grad_reduce, dp_param_gather, sync
};
const char* name(TaskKind k);

/// Where each of a step's seconds went on the representative rank. The parts add up to
/// step_time_s exactly.
struct StepBreakdown {
  double forward_s = 0;
  double backward_s = 0;
  double recompute_s = 0;
  double optimizer_s = 0;
  double dp_comm_exposed_s = 0;  ///< DP communication with the compute stream idle
  double idle_s = 0;             ///< nothing running (kernel gaps are inside compute)
};

struct StepResult {
  double step_time_s = 0;
  StepBreakdown breakdown;
  int micro_batches = 0;
  int grad_buckets = 0;
  double dp_comm_busy_s = 0;        ///< total time DP collectives were running
  double compute_slowdown_s = 0;    ///< compute time lost to SMs taken by communication
  std::size_t tasks = 0;
  std::uint64_t events = 0;
};

/// Builds and runs one step. `costs` come from step_costs() for the same inputs. `network`
/// (the cluster's topology and placement) defaults to the one implied by gpu.node.
StepResult simulate_step(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                         const hardware::GpuSpec& gpu, const StepCosts& costs,
                         const topologies::Network* network = nullptr);

}  // namespace clustersim::models
