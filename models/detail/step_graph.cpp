#include "models/detail/step_graph.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace clustersim::models {

using sim::TaskId;

const char* stream_name(Stream s) {
  static const std::array<const char*, kStreams> names = {"compute",     "tp_comm",   "cp_comm",  "pp_send_fwd",
                                                          "pp_send_bwd", "dp_reduce", "dp_gather", "ep_comm"};
  return names[static_cast<std::size_t>(s)];
}

namespace {

// Task graphs whose storage this thread reuses: a sweep builds thousands of step graphs of up to
// ~10^5 tasks each, and growing fresh vectors for every one was several per cent of its time.
std::vector<sim::TaskGraph>& spare_graphs() {
  thread_local std::vector<sim::TaskGraph> spare;
  return spare;
}
constexpr std::size_t kSpareGraphs = 4;  // a step's graph and the pass merger's unit graphs

}  // namespace

double ep_sm_share(const hardware::GpuSpec& gpu, const TrainingSpec& t) {
  return double(uses_ep_kernels(t.moe_dispatcher) ? t.moe_dispatcher_sms : gpu.comm_sms) / gpu.sms;
}

StepGraph::StepGraph(int stages, const hardware::GpuSpec& gpu, const TrainingSpec& t, bool labels)
    : streams_(static_cast<std::size_t>(stages)),
      comm_sm_share_(double(gpu.comm_sms) / gpu.sms),
      ep_sm_share_(ep_sm_share(gpu, t)),
      free_(t.free_comm),
      want_labels_(labels) {
  auto& spare = spare_graphs();
  if (spare.empty()) return;
  graph_ = std::move(spare.back());
  spare.pop_back();
  graph_.clear();
}

StepGraph::~StepGraph() {
  auto& spare = spare_graphs();
  if (spare.size() < kSpareGraphs) spare.push_back(std::move(graph_));
}

bool StepGraph::is_free(TaskKind kind) const {
  return (kind == TaskKind::tp_comm && free_.tp) || (kind == TaskKind::cp_comm && free_.cp) ||
         (kind == TaskKind::pp_send && free_.pp) || (kind == TaskKind::ep_comm && free_.ep) ||
         ((kind == TaskKind::dp_grad_reduce || kind == TaskKind::dp_param_gather) && free_.dp);
}

void StepGraph::label_from(std::size_t first, int s, Stream stream, TaskKind kind, const topologies::CollectiveTime* cost) {
  if (!want_labels_) return;
  for (std::size_t i = first; i < graph_.size(); ++i) {
    labels_.push_back({s, stream_name(stream), kind, label_mb_, label_layer_, 0, 0, stream == kCompute ? label_parts_ : std::uint16_t(0)});
    if (cost) labels_.back().collective = true, labels_.back().op = cost->op, labels_.back().group = cost->group;
  }
}

TaskId StepGraph::add_task(int s, Stream stream, TaskKind kind, double seconds, std::span<const TaskId> deps,
                           std::span<const sim::ResourceUse> uses, std::int32_t priority) {
  const std::size_t first = graph_.size();
  const TaskId id = graph_.add(s * kStreams + stream, sim::Time::from_seconds(seconds), deps, uses, priority,
                               static_cast<std::int32_t>(kind));
  if (want_labels_) label_from(first, s, stream, kind);
  return id;
}

TaskId StepGraph::add_compute(int s, TaskKind kind, double seconds, std::vector<TaskId>* deps, bool always,
                               double kernel_share) {
  auto& st = stage(s);
  if (seconds <= 0 && !always && deps->empty() && st.wait_next.empty()) return st.last_compute;
  // A merged pass whose kernels run for `kernel_share` of it (the rest: its TP/CP/EP transfers
  // alone) loses SMs to a concurrent transfer only in its kernel part: demanding f + (1 − f)(1 − c)
  // of the SMs, the max-min share (1 − c)/demand is the rate 1/((1 − f) + f/(1 − c)) at which it
  // finishes when its kernels run at 1 − c and its transfers at full speed.
  const double demand = kernel_share + (1 - kernel_share) * (1 - comm_sm_share_);
  const sim::ResourceUse sm[] = {{s * kResources + kSm, demand}};
  return add_next_compute(s, kind, seconds, deps, sm, 0);
}

TaskId StepGraph::add_next_compute(int s, TaskKind kind, double seconds, std::vector<TaskId>* deps,
                                   std::span<const sim::ResourceUse> uses, std::int32_t priority) {
  auto& st = stage(s);
  std::vector<TaskId>& d = deps_scratch_;  // reused: one task is added at a time
  d.assign(deps->begin(), deps->end());
  deps->clear();
  d.insert(d.end(), st.wait_next.begin(), st.wait_next.end());
  st.wait_next.swap(st.wait_later);
  st.wait_later.clear();
  const TaskId id = add_task(s, kCompute, kind, seconds, d, uses, priority);
  st.prev_compute = st.last_compute;
  st.last_compute = id;
  return id;
}

TaskId StepGraph::add_transfer(int s, Stream stream, TaskKind kind, const topologies::CollectiveTime& cost,
                               std::span<const TaskId> deps, bool on_sms) {
  const sim::ResourceUse sms[] = {{s * kResources + kSm, kind == TaskKind::ep_comm ? ep_sm_share_ : comm_sm_share_}};
  const std::span<const sim::ResourceUse> extra = on_sms ? std::span<const sim::ResourceUse>(sms) : std::span<const sim::ResourceUse>();
  if (is_free(kind)) return add_task(s, stream, kind, 0.0, deps, extra, 1);
  const std::size_t first = graph_.size();
  const TaskId last = topologies::append_collective(graph_, cost, s * kStreams + stream, deps, s * kResources + kLinkBase,
                                                    extra, 1, static_cast<std::int32_t>(kind));
  if (want_labels_) label_from(first, s, stream, kind, &cost);
  return last;
}

TaskId StepGraph::emit(int s, const Program& items, TaskKind kind, std::vector<TaskId>* deps) {
  auto& st = stage(s);
  for (const ProgramItem& it : items) {
    if (!it.comm) {
      label_parts_ = it.parts;
      add_compute(s, kind, it.seconds, deps);
      label_parts_ = 0;
      continue;
    }
    std::vector<TaskId> after = std::move(*deps);
    deps->clear();
    const TaskId from = it.start_after == 1 ? st.last_compute : it.start_after == 2 ? st.prev_compute : -1;
    if (from >= 0) after.push_back(from);
    const Stream stream = it.kind == TaskKind::cp_comm ? kCpStream : it.kind == TaskKind::ep_comm ? kEpStream : kTpStream;
    const TaskId id = add_transfer(s, stream, it.kind, it.cost, after, true);
    (it.detached ? st.wait_end : it.wait_now ? st.wait_next : st.wait_later).push_back(id);
  }
  return st.last_compute;
}

std::vector<TaskId> StepGraph::flush(int s) {
  std::vector<TaskId> out;
  flush(s, &out);
  return out;
}

void StepGraph::flush(int s, std::vector<TaskId>* out) {
  auto& st = stage(s);
  out->reserve(out->size() + st.wait_next.size() + st.wait_later.size() + st.wait_end.size() + 1);
  out->insert(out->end(), st.wait_next.begin(), st.wait_next.end());
  out->insert(out->end(), st.wait_later.begin(), st.wait_later.end());
  out->insert(out->end(), st.wait_end.begin(), st.wait_end.end());
  if (st.last_compute >= 0) out->push_back(st.last_compute);
  st.wait_next.clear(), st.wait_later.clear(), st.wait_end.clear();
}

namespace {
// The uses of a task of `seconds` alone that puts `link_s` capacity-seconds on each link class of
// stage s (at most the whole class), and holds `sm_share` of its SMs.
using LinkUses = std::array<sim::ResourceUse, topologies::kLinkClasses + 1>;
std::span<const sim::ResourceUse> link_uses(int s, double seconds, std::span<const double> link_s, LinkUses* uses,
                                            double sm_share = 0) {
  std::size_t n = 0;
  if (sm_share > 0) (*uses)[n++] = {s * kResources + kSm, sm_share};
  for (std::size_t c = 0; c < link_s.size(); ++c)
    if (link_s[c] > 0 && seconds > 0)
      (*uses)[n++] = {s * kResources + kLinkBase + std::int32_t(c), std::min(1.0, link_s[c] / seconds)};
  return {uses->data(), n};
}
}  // namespace

TaskId StepGraph::add_tail(int s, double seconds, std::span<const double> link_s) {
  auto& st = stage(s);
  const TaskId after[] = {st.last_compute};
  LinkUses uses;
  const TaskId id =
      add_task(s, kEpStream, TaskKind::ep_comm, seconds, std::span<const TaskId>(after, st.last_compute >= 0 ? 1 : 0),
               link_uses(s, seconds, link_s, &uses, ep_sm_share_), 1);
  st.wait_end.push_back(id);
  st.tail = id;
  return id;
}

TaskId StepGraph::add_exchanges(int s, double seconds, std::span<const double> link_s, std::vector<TaskId>* deps) {
  LinkUses uses;
  return add_next_compute(s, TaskKind::ep_exposed, seconds, deps, link_uses(s, seconds, link_s, &uses), 1);
}

void StepGraph::mark_merged(TaskId id, int profile, bool continuation) {
  merged_.resize(static_cast<std::size_t>(id) + 1, -1);
  merged_[static_cast<std::size_t>(id)] = 2 * profile + (continuation ? 1 : 0);
}

void StepGraph::mark_send(std::size_t first_task, int to) {
  receiver_.resize(graph_.size(), -1);
  for (std::size_t i = first_task; i < graph_.size(); ++i) receiver_[i] = to;
}

}  // namespace clustersim::models
