#pragma once
// One training step on one representative rank per pipeline stage (all data-parallel, TP and
// CP replicas do the same work; DESIGN.md "symmetry reduction"): the task graph of the
// pipeline schedule's micro-batch passes over block parts, with tensor-parallel collectives,
// ring-attention K/V exchange, stage-to-stage sends, data-parallel / ZeRO collectives and the
// optimizer, all run on the event engine in one graph so that the pipeline bubble emerges.
#include <array>
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

/// A communication class of the step. Exposed and busy times are arrays indexed by it, so a new
/// class is one enumerator, the rule that attributes it (step_attribution.cpp) and its writers.
enum class Channel : std::uint8_t { tp, cp, pp, dp, ep };
inline constexpr std::size_t kChannels = 5;

/// Seconds per channel.
struct ChannelSeconds {
  std::array<double, kChannels> s{};
  double& operator[](Channel c) { return s[static_cast<std::size_t>(c)]; }
  double operator[](Channel c) const { return s[static_cast<std::size_t>(c)]; }
};

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
  double idle_s = 0;             ///< nothing running (kernel gaps are inside compute)
  double bubble_s = 0;           ///< pipeline stage waiting for other stages' work
  /// Each channel's communication with the compute stream idle: TP collectives, CP K/V transfers,
  /// waiting for a pipeline send in flight (pp), DP collectives, MoE dispatch / combine and ETP
  /// gathers (ep).
  ChannelSeconds comm_exposed;
};

struct StepResult {
  double step_time_s = 0;
  StepBreakdown breakdown;       ///< of the stage with the most compute (`stage`)
  int stage = 0;
  std::vector<StepBreakdown> stages;  ///< one per pipeline stage
  int micro_batches = 0;
  int grad_buckets = 0;             ///< on stage 0
  double compute_slowdown_s = 0;    ///< compute time lost to SMs taken by communication
  /// Total time each channel's transfers were running on the reported stage (pp: not tallied).
  ChannelSeconds comm_busy;
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
