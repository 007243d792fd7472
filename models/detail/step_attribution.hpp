#pragma once
// One attribution pass over a run: where each stage's seconds went (StepBreakdown) and how long
// each communication class was busy. Used for the whole step and for the passes the merger
// profiles alone, so both follow one rule.
#include <array>
#include <cstdint>
#include <vector>

#include "models/step.hpp"
#include "models/detail/step_graph.hpp"
#include "sim/runner.hpp"

namespace clustersim::models {

/// Where the time of a merged task went when its kernels and transfers ran alone: a whole pass
/// (or one unit) simulated once at kernel granularity, then run as one task of `total_s`.
struct PassProfile {
  double total_s = 0;
  double forward_s = 0, backward_s = 0, recompute_s = 0;
  ChannelSeconds exposed;  ///< transfer time with no kernel running (tp, cp, ep)
  ChannelSeconds busy;
  double slowdown_s = 0;  ///< kernel time lost to SMs taken by the overlapped transfers
  /// Time the unit's last task outlasts its last non-EP task: a detached (A2A-overlapped) exchange
  /// still in flight after the compute is done, which the next unit's compute does not wait for.
  /// Not in total_s nor the EP tallies: the step builder runs it as a task of its own.
  double tail_s = 0;
  double ep_lead_s = 0;  ///< when the unit's first EP exchange starts (a previous tail delays it)
  double ep_first_s = 0;  ///< how long the compute then waits for it (and the exchanges queued with it)
  /// Capacity-seconds (demand × time alone) the EP exchanges take of each of the stage's link
  /// classes: in the merged task, and in its tail. The step builder puts the exposed exchanges'
  /// share on the links (StepGraph::add_exchanges, add_tail), so that the stage's other transfers
  /// share them.
  std::array<double, topologies::kLinkClasses> ep_link_s{}, tail_link_s{};
};

struct StageTime {
  StepBreakdown breakdown;
  double compute_busy_s = 0;   ///< compute stream busy (the stage with the most is reported)
  double slowdown_s = 0;       ///< compute time lost to SMs taken by communication
  ChannelSeconds busy;         ///< each channel's transfers running (pp: not tallied)
};

/// A stage's time as integer picoseconds, so that a step whose schedule repeats has tallies
/// exactly affine in its micro-batches (models/pipeline_steady.hpp extrapolates them).
/// kTallyExposed and kTallyBusy start kChannels fields each, indexed by Channel (tally_field).
enum TallyField : std::size_t {
  kTallyForward, kTallyBackward, kTallyRecompute, kTallyOptimizer,  ///< unmerged compute tasks
  kTallyIdle, kTallyComputeBusy, kTallySlowdown,
  kTallyExposed, kTallyBusy = kTallyExposed + kChannels, kTallyFields = kTallyBusy + kChannels
};
constexpr std::size_t tally_field(TallyField first, Channel c) { return first + static_cast<std::size_t>(c); }
struct StageTally {
  std::array<std::int64_t, kTallyFields> ps{};
  std::vector<std::int64_t> merged_n;       ///< per pass profile: merged tasks that ran
  std::vector<std::int64_t> merged_excess;  ///< per pass profile: their time over their work (ps)
};

/// The tallies of every stage of `run` (the rule of attribute() below).
std::vector<StageTally> tally_stages(const StepGraph& g, const sim::RunResult& run, int stages,
                                     std::size_t profiles, bool sends_block_sender);
/// A stage's seconds from its tallies; idle time is the bubble when `pipelined`.
StageTime stage_time(const StageTally& t, const std::vector<PassProfile>& profiles, bool pipelined);

/// Attributes every task of `g` that ran in `run` to its stage. Merged tasks (g.merged_profile)
/// bring their profile's split; a pipeline send holds up its receiver, and its sender too when
/// `sends_block_sender`. Idle time with `stages` > 1 is the bubble.
std::vector<StageTime> attribute(const StepGraph& g, const sim::RunResult& run, int stages,
                                 const std::vector<PassProfile>& profiles, bool sends_block_sender);

/// The profile of a pass or unit simulated alone on a one-stage graph.
PassProfile profile_of(const StepGraph& g, const sim::RunResult& run);

}  // namespace clustersim::models
