#pragma once
// One training step on one representative rank per pipeline stage (all data-parallel, TP and
// CP replicas do the same work; DESIGN.md "symmetry reduction"): the task graph of the
// pipeline schedule's micro-batch passes over block parts, with tensor-parallel collectives,
// ring-attention K/V exchange, stage-to-stage sends, data-parallel / ZeRO collectives and the
// optimizer, all run on the event engine in one graph so that the pipeline bubble emerges.
#include <cstdint>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "models/layer_ops.hpp"
#include "models/model_spec.hpp"
#include "models/step_program.hpp"
#include "models/training_spec.hpp"
#include "sim/runner.hpp"
#include "sim/task_graph.hpp"
#include "topologies/network.hpp"

namespace clustersim::models {


/// Where each of a step's seconds went on one stage's compute stream. The parts add up to
/// step_time_s exactly. Time with the compute stream idle goes to the first of: a TP
/// collective, a CP K/V transfer, a pipeline send into this stage (or out of it, when sends
/// block the sender), a DP parameter gather, in flight; after the stage's last backward, also a DP gradient reduction; else to the bubble
/// (pp > 1) or to idle (pp = 1).
struct StepBreakdown {
  double forward_s = 0;
  double backward_s = 0;
  double recompute_s = 0;
  double optimizer_s = 0;
  double dp_comm_exposed_s = 0;  ///< DP communication with the compute stream idle
  double idle_s = 0;             ///< nothing running (kernel gaps are inside compute)
  double tp_comm_exposed_s = 0;
  double cp_comm_exposed_s = 0;
  double pp_comm_exposed_s = 0;  ///< waiting for an activation / gradient send in flight
  double bubble_s = 0;           ///< pipeline stage waiting for other stages' work
  double ep_comm_exposed_s = 0;  ///< MoE dispatch / combine (and ETP gathers) with compute idle
};

struct StepResult {
  double step_time_s = 0;
  StepBreakdown breakdown;       ///< of the stage with the most compute (`stage`)
  int stage = 0;
  std::vector<StepBreakdown> stages;  ///< one per pipeline stage
  int micro_batches = 0;
  int grad_buckets = 0;             ///< on stage 0
  double dp_comm_busy_s = 0;        ///< total time DP collectives were running
  double compute_slowdown_s = 0;    ///< compute time lost to SMs taken by communication
  double tp_comm_busy_s = 0;        ///< total time TP collectives were running (that stage)
  double cp_comm_busy_s = 0;
  double ep_comm_busy_s = 0;        ///< total time MoE all-to-alls were running (that stage)
  std::size_t tasks = 0;
  std::uint64_t events = 0;
};

/// One simulated task, for timelines (--trace): where and when it ran and what it was.
struct TimelineEntry {
  int stage = 0;
  const char* stream = "";   ///< compute, tp_comm, cp_comm, pp_send_fwd, pp_send_bwd, dp_reduce, dp_gather
  TaskKind kind = TaskKind::forward;
  int micro_batch = -1;      ///< -1: not tied to a micro-batch (optimizer, bucket collectives)
  int layer = -1;            ///< global block index; -1: embedding, -2: LM head, -3: none
  double start_s = 0, end_s = 0;
  std::uint16_t parts = 0;   ///< compute of a block: the BlockParts it ran (ProgramItem::parts)
  bool collective = false;   ///< a transfer: `op` over `group` (trace names, e.g. tp.all_gather)
  topologies::Collective op = topologies::Collective::all_reduce;
  topologies::GroupDim group = topologies::GroupDim::tp;
};

/// Builds and runs one step. `costs` come from step_costs() for the same inputs. `network` (the
/// cluster's topology, rank placement and algorithm policy) costs every transfer: TP and CP
/// collectives, pipeline sends, DP / ZeRO collectives and the tied-embedding sync. When
/// `timeline` is given it receives every task with a non-zero duration. A deep pipeline's step is
/// extrapolated from its steady state when that is exact (models/pipeline_steady.hpp).
StepResult simulate_step(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                         const hardware::GpuSpec& gpu, const StepCosts& costs, const topologies::Network& network,
                         std::vector<TimelineEntry>* timeline = nullptr);
/// The same step with every micro-batch simulated; simulate_step() takes this path unless the
/// schedule's steady state can be extrapolated exactly (models/pipeline_steady.hpp).
StepResult simulate_step_full(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                              const hardware::GpuSpec& gpu, const StepCosts& costs, const topologies::Network& network,
                              std::vector<TimelineEntry>* timeline = nullptr);

}  // namespace clustersim::models
