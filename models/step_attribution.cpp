#include "models/step_attribution.hpp"

#include <algorithm>

namespace clustersim::models {

namespace {

using sim::Time;

enum Category { kCatCompute, kCatTp, kCatCp, kCatPp, kCatDpGather, kCatDpReduce, kCatEp, kCategories };

struct Edge {
  Time at;
  int delta;
  Category cat;
};

// A merged pass: when other streams' SMs slowed it down, the stretch belongs to its kernels
// (transfers are not slowed by SM sharing); its transfers keep their isolated times.
void add_merged(const PassProfile& prof, double dur, StageTime* st) {
  const double kernels = prof.forward_s + prof.backward_s + prof.recompute_s;
  const double stretch = kernels > 0 ? (kernels + dur - prof.total_s) / kernels : 1.0;
  auto& b = st->breakdown;
  b.forward_s += prof.forward_s * stretch, b.backward_s += prof.backward_s * stretch;
  b.recompute_s += prof.recompute_s * stretch;
  b.tp_comm_exposed_s += prof.tp_exposed_s, b.cp_comm_exposed_s += prof.cp_exposed_s;
  b.ep_comm_exposed_s += prof.ep_exposed_s;
  st->tp_busy_s += prof.tp_busy_s, st->cp_busy_s += prof.cp_busy_s, st->ep_busy_s += prof.ep_busy_s;
  st->slowdown_s += prof.slowdown_s;
}

// Idle compute-stream time goes to the first of: a TP collective, a CP transfer, a pipeline
// send, a DP parameter gather in flight; after the stage's last pass, a DP gradient reduction;
// else the bubble (pp > 1) or idle.
void account_idle(std::vector<Edge>& ev, Time makespan, Time last_pass_end, bool pipelined, StepBreakdown* b) {
  std::sort(ev.begin(), ev.end(), [](const Edge& x, const Edge& y) { return x.at < y.at; });
  int active[kCategories] = {};
  Time prev{};
  auto account = [&](Time from, Time to) {
    if (to <= from || active[kCatCompute] > 0) return;
    const double d = (to - from).seconds();
    const bool tail = from >= last_pass_end;
    if (active[kCatTp] > 0) b->tp_comm_exposed_s += d;
    else if (active[kCatCp] > 0) b->cp_comm_exposed_s += d;
    else if (active[kCatEp] > 0) b->ep_comm_exposed_s += d;
    else if (active[kCatPp] > 0) b->pp_comm_exposed_s += d;
    else if (active[kCatDpGather] > 0 || (tail && active[kCatDpReduce] > 0)) b->dp_comm_exposed_s += d;
    else if (pipelined) b->bubble_s += d;
    else b->idle_s += d;
  };
  for (const Edge& e : ev) {
    account(prev, e.at);
    prev = e.at;
    active[e.cat] += e.delta;
  }
  account(prev, makespan);
}

}  // namespace

std::vector<StageTime> attribute(const StepGraph& g, const sim::RunResult& run, int stages,
                                 const std::vector<PassProfile>& profiles, bool sends_block_sender) {
  const auto P = static_cast<std::size_t>(stages);
  std::vector<StageTime> out(P);
  std::vector<std::vector<Edge>> edges(P);
  std::vector<Time> last_pass_end(P);
  const sim::TaskGraph& graph = g.graph();
  for (std::size_t i = 0; i < graph.size(); ++i) {
    const sim::TaskView task = graph[sim::TaskId(i)];
    const auto& tm = run.timing[i];
    if (tm.end <= tm.start) continue;
    auto s = static_cast<std::size_t>(task.stream / kStreams);
    const double dur = (tm.end - tm.start).seconds();
    const auto kind = static_cast<TaskKind>(task.tag);
    Category cat = kCatCompute;
    if (const int k = g.merged_profile(sim::TaskId(i)); k >= 0) {
      add_merged(profiles[static_cast<std::size_t>(k)], dur, &out[s]);
    } else switch (kind) {
      case TaskKind::forward: out[s].breakdown.forward_s += dur; break;
      case TaskKind::backward: out[s].breakdown.backward_s += dur; break;
      case TaskKind::recompute: out[s].breakdown.recompute_s += dur; break;
      case TaskKind::optimizer: out[s].breakdown.optimizer_s += dur; break;
      case TaskKind::tp_comm: cat = kCatTp; out[s].tp_busy_s += dur; break;
      case TaskKind::cp_comm: cat = kCatCp; out[s].cp_busy_s += dur; break;
      case TaskKind::ep_comm: cat = kCatEp; out[s].ep_busy_s += dur; break;
      case TaskKind::pp_send: {  // holds up the receiver, and the sender unless overlapped
        cat = kCatPp;
        if (sends_block_sender) edges[s].push_back({tm.start, +1, cat}), edges[s].push_back({tm.end, -1, cat});
        s = static_cast<std::size_t>(g.receiver(sim::TaskId(i)));
        break;
      }
      case TaskKind::dp_param_gather: cat = kCatDpGather; out[s].dp_busy_s += dur; break;
      case TaskKind::dp_grad_reduce: cat = kCatDpReduce; out[s].dp_busy_s += dur; break;
      case TaskKind::sync: break;
    }
    if (cat == kCatCompute) {
      out[s].compute_busy_s += dur;
      out[s].slowdown_s += dur - task.work.seconds();
      if (kind == TaskKind::forward || kind == TaskKind::backward || kind == TaskKind::recompute)
        last_pass_end[s] = std::max(last_pass_end[s], tm.end);
    }
    edges[s].push_back({tm.start, +1, cat});
    edges[s].push_back({tm.end, -1, cat});
  }
  for (std::size_t s = 0; s < P; ++s) account_idle(edges[s], run.makespan, last_pass_end[s], stages > 1, &out[s].breakdown);
  return out;
}

PassProfile profile_of(const StepGraph& g, const sim::RunResult& run) {
  const StageTime st = attribute(g, run, 1, {}, false).front();
  PassProfile p;
  p.total_s = run.makespan.seconds();
  p.forward_s = st.breakdown.forward_s, p.backward_s = st.breakdown.backward_s;
  p.recompute_s = st.breakdown.recompute_s;
  p.tp_exposed_s = st.breakdown.tp_comm_exposed_s, p.cp_exposed_s = st.breakdown.cp_comm_exposed_s;
  p.tp_busy_s = st.tp_busy_s, p.cp_busy_s = st.cp_busy_s;
  p.ep_exposed_s = st.breakdown.ep_comm_exposed_s, p.ep_busy_s = st.ep_busy_s;
  p.slowdown_s = st.slowdown_s;
  return p;
}

}  // namespace clustersim::models
