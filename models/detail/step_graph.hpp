#pragma once
// The task graph of one step as it is built: per stage, its streams (compute, TP, CP, pipeline
// sends, DP) and resources (SMs, the topology's link classes), the in-order bookkeeping of the
// compute stream, and one trace label per task when a timeline is wanted. Every transfer goes
// through add_transfer(): its phases load the link classes, so a stage's concurrent transfers
// (TP, CP, PP, DP) share them.
#include <span>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "models/step.hpp"
#include "models/step_program.hpp"
#include "sim/task_graph.hpp"
#include "topologies/network.hpp"

namespace clustersim::models {

// Stage s uses streams s·kStreams + stream and resources s·kResources + resource.
enum Stream : std::int32_t { kCompute, kTpStream, kCpStream, kPpFwdStream, kPpBwdStream, kDpReduceStream,
                             kDpGatherStream, kEpStream, kStreams };
enum Resource : std::int32_t { kSm, kLinkBase, kResources = kLinkBase + topologies::kLinkClasses };
const char* stream_name(Stream s);

/// The share of the SMs an EP exchange's kernels hold: DeepEP / HybridEP's training.moe_dispatcher_sms,
/// NCCL's the profile's comm_sms (hardware.md §3.9).
double ep_sm_share(const hardware::GpuSpec& gpu, const TrainingSpec& t);

/// The compute stream's state on one stage: what the next compute waits for.
struct StreamState {
  sim::TaskId last_compute = -1, prev_compute = -1;
  std::vector<sim::TaskId> wait_next, wait_later;
  std::vector<sim::TaskId> wait_end;  ///< detached transfers: only the pass's end waits for them
  /// The latest merged task's EP tail (add_tail), −1 once a later exchange has queued behind it.
  sim::TaskId tail = -1;
};

class StepGraph {
 public:
  StepGraph(int stages, const hardware::GpuSpec& gpu, const TrainingSpec& t, bool labels);
  ~StepGraph();
  StepGraph(const StepGraph&) = delete;
  StepGraph& operator=(const StepGraph&) = delete;

  /// A compute task on stage s after `deps` (consumed) and the transfers the stream waits for.
  /// Zero-time tasks are skipped unless `always` or something must be waited for.
  sim::TaskId add_compute(int s, TaskKind kind, double seconds, std::vector<sim::TaskId>* deps, bool always = false,
                          double kernel_share = 1.0);
  /// A merged pass's detached EP exchange still in flight when its kernels end (PassProfile::tail_s):
  /// on the EP stream after the last compute, waited for where the pass ends (flush, send); it
  /// holds the exchange kernels' SMs and puts `link_s` capacity-seconds on the link classes.
  sim::TaskId add_tail(int s, double seconds, std::span<const double> link_s = {});
  /// A merged pass's exposed EP exchanges (PassProfile::exposed) as one task on the compute stream
  /// after `deps` (consumed) and what the stream waits for: `seconds` alone, putting `link_s`
  /// capacity-seconds on each of stage s's link classes (PassProfile::ep_link_s), so that the
  /// stage's other transfers (DP, PP) share the links with them as with the exchanges of the
  /// kernel-level graph.
  sim::TaskId add_exchanges(int s, double seconds, std::span<const double> link_s, std::vector<sim::TaskId>* deps);
  /// A transfer's phases on `stream` of stage s, on its link classes (and comm_sms SMs when
  /// `on_sms`: NCCL kernels, hardware.md §3.9; an EP exchange by DeepEP / HybridEP kernels
  /// holds training.moe_dispatcher_sms); one zero-time task for a free class.
  sim::TaskId add_transfer(int s, Stream stream, TaskKind kind, const topologies::CollectiveTime& cost,
                           std::span<const sim::TaskId> deps, bool on_sms);
  /// A program's items on stage s; the first compute also waits for `deps` (consumed). Returns
  /// the last compute task.
  sim::TaskId emit(int s, const Program& items, TaskKind kind, std::vector<sim::TaskId>* deps);
  /// Everything the stage's latest pass produced: its last compute and any transfer after it.
  std::vector<sim::TaskId> flush(int s);
  /// The same, appended to `out`.
  void flush(int s, std::vector<sim::TaskId>* out);

  StreamState& stage(int s) { return streams_[static_cast<std::size_t>(s)]; }
  const sim::TaskGraph& graph() const { return graph_; }
  std::size_t size() const { return graph_.size(); }

  /// What the tasks added next belong to, for trace labels.
  void set_label(int micro_batch, int layer) { label_mb_ = micro_batch, label_layer_ = layer; }
  const std::vector<TimelineEntry>& labels() const { return labels_; }

  /// A merged task (one pass or unit, profile `profile` of the PassMerger); `continuation`: the
  /// second part of one run as two tasks (the step builder's add_merged).
  void mark_merged(sim::TaskId id, int profile, bool continuation = false);
  int merged_profile(sim::TaskId id) const {
    const int v = static_cast<std::size_t>(id) < merged_.size() ? merged_[static_cast<std::size_t>(id)] : -1;
    return v < 0 ? -1 : v / 2;
  }
  bool merged_continuation(sim::TaskId id) const {
    return static_cast<std::size_t>(id) < merged_.size() && merged_[static_cast<std::size_t>(id)] % 2 == 1;
  }
  /// A pipeline send's receiving stage (−1: not a send).
  void mark_send(std::size_t first_task, int to);
  int receiver(sim::TaskId id) const {
    return static_cast<std::size_t>(id) < receiver_.size() ? receiver_[static_cast<std::size_t>(id)] : -1;
  }

 private:
  sim::TaskId add_task(int s, Stream stream, TaskKind kind, double seconds, std::span<const sim::TaskId> deps,
                       std::span<const sim::ResourceUse> uses, std::int32_t priority);
  /// The compute stream's next task: after `deps` (consumed) and what the stream waits for.
  sim::TaskId add_next_compute(int s, TaskKind kind, double seconds, std::vector<sim::TaskId>* deps,
                               std::span<const sim::ResourceUse> uses, std::int32_t priority);
  bool is_free(TaskKind kind) const;
  void label_from(std::size_t first, int s, Stream stream, TaskKind kind, const topologies::CollectiveTime* cost = nullptr);

  sim::TaskGraph graph_;
  std::vector<StreamState> streams_;
  double comm_sm_share_;
  double ep_sm_share_;  ///< of an EP exchange's kernels
  TrainingSpec::FreeComm free_;
  bool want_labels_;
  std::vector<TimelineEntry> labels_;  // one per task, only when a timeline is wanted
  int label_mb_ = -1, label_layer_ = -3;
  std::uint16_t label_parts_ = 0;  // the program item being emitted (compute)
  std::vector<int> merged_;        ///< per task id: 2·profile + continuation, or −1 (shorter: −1)
  std::vector<int> receiver_;  ///< per task id: a send's receiving stage, or −1 (shorter: −1)
  std::vector<sim::TaskId> deps_scratch_;
};

}  // namespace clustersim::models
