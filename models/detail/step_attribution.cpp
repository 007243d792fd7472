#include "models/detail/step_attribution.hpp"

#include <algorithm>
#include <stdexcept>

namespace clustersim::models {

namespace {

using sim::Time;

enum Category { kCatCompute, kCatTp, kCatCp, kCatPp, kCatDpGather, kCatDpReduce, kCatEp, kCategories };

struct Edge {
  Time at;
  int delta;
  Category cat;
};

double seconds(std::int64_t ps) { return Time::from_ps(ps).seconds(); }

// A pass's kernels (forward, backward, recompute, W), as opposed to its transfers and the rest.
bool is_kernel_kind(TaskKind k) {
  return k == TaskKind::forward || k == TaskKind::backward || k == TaskKind::weight_grad || k == TaskKind::recompute;
}

// A stage's edges as sorted runs: each stream's tasks run one after another, so the edges one
// stream contributes to one stage (start, end, start, end, ...) are already in time order.
struct StageEdges {
  std::vector<Edge> edges;
  std::vector<std::size_t> run_begin;  // where each run starts in `edges`
  std::int32_t last_stream = -1;       // the stream of the run being filled
  void push(std::int32_t stream, Time from, Time to, Category cat) {
    if (stream != last_stream) run_begin.push_back(edges.size()), last_stream = stream;
    edges.push_back({from, +1, cat});
    edges.push_back({to, -1, cat});
  }
};

// A stage's edges put in time order, in place: the runs merged pairwise (log2(runs) linear passes;
// the order of edges at one instant does not matter: no time passes between them). `b` and `next`
// are scratch.
const std::vector<Edge>& in_time_order(StageEdges& se, std::vector<Edge>& b, std::vector<std::size_t>& next) {
  std::vector<Edge>& a = se.edges;
  b.resize(a.size());
  std::vector<std::size_t>& bounds = se.run_begin;
  bounds.push_back(a.size());
  auto by_time = [](const Edge& x, const Edge& y) { return x.at < y.at; };
  while (bounds.size() > 2) {
    next.assign(1, 0);
    const std::size_t runs = bounds.size() - 1;
    for (std::size_t r = 0; r < runs; r += 2) {
      const auto lo = std::ptrdiff_t(bounds[r]), mid = std::ptrdiff_t(bounds[r + 1]);
      const auto hi = r + 2 <= runs ? std::ptrdiff_t(bounds[r + 2]) : mid;
      std::merge(a.begin() + lo, a.begin() + mid, a.begin() + mid, a.begin() + hi, b.begin() + lo, by_time);
      next.push_back(std::size_t(hi));
    }
    a.swap(b);
    bounds.swap(next);
  }
  return a;
}

// The per-stage edge lists and scratch of tally_stages, kept by each thread between steps (a sweep
// tallies thousands).
struct TallyScratch {
  std::vector<StageEdges> edges;
  std::vector<std::uint32_t> stream_at;
  std::vector<sim::TaskId> by_stream;
  std::vector<Edge> merged;
  std::vector<std::size_t> bounds;
};

// Idle compute-stream time goes to the first of: a TP collective, a CP transfer, a pipeline
// send, a DP parameter gather in flight; after the stage's last pass, a DP gradient reduction;
// else idle (the bubble when pipelined).
void account_idle(const std::vector<Edge>& ev, Time makespan, Time last_pass_end, StageTally* t) {
  int active[kCategories] = {};
  Time prev{};
  auto account = [&](Time from, Time to) {
    if (to <= from || active[kCatCompute] > 0) return;
    const std::int64_t d = (to - from).ps();
    const bool tail = from >= last_pass_end;
    if (active[kCatTp] > 0) t->ps[tally_field(kTallyExposed, Channel::tp)] += d;
    else if (active[kCatCp] > 0) t->ps[tally_field(kTallyExposed, Channel::cp)] += d;
    else if (active[kCatEp] > 0) t->ps[tally_field(kTallyExposed, Channel::ep)] += d;
    else if (active[kCatPp] > 0) t->ps[tally_field(kTallyExposed, Channel::pp)] += d;
    else if (active[kCatDpGather] > 0 || (tail && active[kCatDpReduce] > 0)) t->ps[tally_field(kTallyExposed, Channel::dp)] += d;
    else t->ps[kTallyIdle] += d;
  };
  for (const Edge& e : ev) {
    if (e.at < prev) throw std::logic_error("attribution: a stream's tasks overlap in time");
    account(prev, e.at);
    prev = e.at;
    active[e.cat] += e.delta;
  }
  account(prev, makespan);
}

}  // namespace

std::vector<StageTally> tally_stages(const StepGraph& g, const sim::RunResult& run, int stages,
                                     std::size_t profiles, bool sends_block_sender) {
  const auto P = static_cast<std::size_t>(stages);
  std::vector<StageTally> out(P);
  for (auto& t : out) t.merged_n.assign(profiles, 0), t.merged_excess.assign(profiles, 0);
  thread_local TallyScratch scratch;
  std::vector<StageEdges>& edges = scratch.edges;
  edges.resize(std::max(edges.size(), P));
  for (std::size_t s = 0; s < P; ++s) edges[s].edges.clear(), edges[s].run_begin.clear(), edges[s].last_stream = -1;
  std::vector<Time> last_pass_end(P);
  const sim::TaskGraph& graph = g.graph();
  // Tasks grouped by stream, each stream in its order (a counting sort), so that every stage's
  // edges arrive as sorted runs.
  std::vector<std::uint32_t>& stream_at = scratch.stream_at;
  stream_at.assign(static_cast<std::size_t>(graph.num_streams()) + 1, 0);
  for (std::size_t i = 0; i < graph.size(); ++i) ++stream_at[static_cast<std::size_t>(graph[sim::TaskId(i)].stream) + 1];
  for (std::size_t k = 1; k < stream_at.size(); ++k) stream_at[k] += stream_at[k - 1];
  {  // two edges per task of the stage's streams, and as many again for its sends (the neighbours' come in)
    std::vector<std::size_t> n(P, 0);
    for (std::size_t st = 0; st + 1 < stream_at.size(); ++st) {
      const std::size_t tasks = stream_at[st + 1] - stream_at[st], k = st % kStreams;
      n[st / kStreams] += 2 * tasks * (k == kPpFwdStream || k == kPpBwdStream ? 2 : 1);
    }
    for (std::size_t s = 0; s < P; ++s) edges[s].edges.reserve(n[s]);
  }
  std::vector<sim::TaskId>& by_stream = scratch.by_stream;
  by_stream.resize(graph.size());
  for (std::size_t i = 0; i < graph.size(); ++i)
    by_stream[stream_at[static_cast<std::size_t>(graph[sim::TaskId(i)].stream)]++] = sim::TaskId(i);
  for (const sim::TaskId id : by_stream) {
    const auto i = static_cast<std::size_t>(id);
    const sim::TaskView task = graph[id];
    const auto& tm = run.timing[i];
    if (tm.end <= tm.start) continue;
    auto s = static_cast<std::size_t>(task.stream / kStreams);
    const std::int64_t dur = (tm.end - tm.start).ps();
    const auto kind = static_cast<TaskKind>(task.tag);
    auto& ps = out[s].ps;
    Category cat = kCatCompute;
    if (const int k = g.merged_profile(sim::TaskId(i)); k >= 0) {
      // A merged pass: when other streams' SMs slowed it down, the stretch belongs to its
      // kernels (transfers are not slowed by SM sharing); its transfers keep their isolated times.
      if (!g.merged_continuation(sim::TaskId(i))) ++out[s].merged_n[static_cast<std::size_t>(k)];
      out[s].merged_excess[static_cast<std::size_t>(k)] += dur - task.work.ps();
    } else switch (kind) {
      case TaskKind::forward: ps[kTallyForward] += dur; break;
      case TaskKind::backward:
      case TaskKind::weight_grad: ps[kTallyBackward] += dur; break;  // W passes are backward compute
      case TaskKind::recompute: ps[kTallyRecompute] += dur; break;
      case TaskKind::optimizer: ps[kTallyOptimizer] += dur; break;
      case TaskKind::tp_comm: cat = kCatTp; ps[tally_field(kTallyBusy, Channel::tp)] += dur; break;
      case TaskKind::cp_comm: cat = kCatCp; ps[tally_field(kTallyBusy, Channel::cp)] += dur; break;
      case TaskKind::ep_comm: cat = kCatEp; ps[tally_field(kTallyBusy, Channel::ep)] += dur; break;
      case TaskKind::ep_exposed:  // a merged pass's exposed exchanges: their time alone is in its
        break;                    // profile, what the links slowed them by is exposed EP (below)
      case TaskKind::pp_send: {  // holds up the receiver, and the sender unless overlapped
        cat = kCatPp;
        if (sends_block_sender) edges[s].push(task.stream, tm.start, tm.end, cat);
        s = static_cast<std::size_t>(g.receiver(sim::TaskId(i)));
        break;
      }
      case TaskKind::dp_param_gather: cat = kCatDpGather; ps[tally_field(kTallyBusy, Channel::dp)] += dur; break;
      case TaskKind::dp_grad_reduce: cat = kCatDpReduce; ps[tally_field(kTallyBusy, Channel::dp)] += dur; break;
      case TaskKind::sync: break;
    }
    if (cat == kCatCompute) {
      out[s].ps[kTallyComputeBusy] += dur;
      const bool exchanges = kind == TaskKind::ep_exposed;
      out[s].ps[exchanges ? tally_field(kTallyExposed, Channel::ep) : std::size_t(kTallySlowdown)] +=
          dur - task.work.ps();
      if (is_kernel_kind(kind) || exchanges) last_pass_end[s] = std::max(last_pass_end[s], tm.end);
    }
    edges[s].push(task.stream, tm.start, tm.end, cat);
  }
  for (std::size_t s = 0; s < P; ++s)
    account_idle(in_time_order(edges[s], scratch.merged, scratch.bounds), run.makespan, last_pass_end[s], &out[s]);
  return out;
}

StageTime stage_time(const StageTally& t, const std::vector<PassProfile>& profiles, bool pipelined) {
  StageTime st;
  auto& b = st.breakdown;
  b.forward_s = seconds(t.ps[kTallyForward]), b.backward_s = seconds(t.ps[kTallyBackward]);
  b.recompute_s = seconds(t.ps[kTallyRecompute]), b.optimizer_s = seconds(t.ps[kTallyOptimizer]);
  for (std::size_t c = 0; c < kChannels; ++c) {
    b.comm_exposed.s[c] = seconds(t.ps[kTallyExposed + c]);
    st.busy.s[c] = seconds(t.ps[kTallyBusy + c]);
  }
  (pipelined ? b.bubble_s : b.idle_s) = seconds(t.ps[kTallyIdle]);
  st.compute_busy_s = seconds(t.ps[kTallyComputeBusy]), st.slowdown_s = seconds(t.ps[kTallySlowdown]);
  for (std::size_t k = 0; k < t.merged_n.size(); ++k) {
    const auto n = double(t.merged_n[k]);
    if (n == 0) continue;
    const PassProfile& prof = profiles[k];
    // Σ over its tasks of (kernels + stretch) / kernels: the kernels take the slowdown.
    const double kernels = prof.forward_s + prof.backward_s + prof.recompute_s;
    const double stretch = kernels > 0 ? n + seconds(t.merged_excess[k]) / kernels : n;
    b.forward_s += prof.forward_s * stretch, b.backward_s += prof.backward_s * stretch;
    b.recompute_s += prof.recompute_s * stretch;
    for (std::size_t c = 0; c < kChannels; ++c) {
      b.comm_exposed.s[c] += prof.exposed.s[c] * n;
      st.busy.s[c] += prof.busy.s[c] * n;
    }
    st.slowdown_s += prof.slowdown_s * n;
  }
  return st;
}

std::vector<StageTime> attribute(const StepGraph& g, const sim::RunResult& run, int stages,
                                 const std::vector<PassProfile>& profiles, bool sends_block_sender) {
  std::vector<StageTime> out;
  for (const StageTally& t : tally_stages(g, run, stages, profiles.size(), sends_block_sender))
    out.push_back(stage_time(t, profiles, stages > 1));
  return out;
}

PassProfile profile_of(const StepGraph& g, const sim::RunResult& run) {
  const StageTime st = attribute(g, run, 1, {}, false).front();
  PassProfile p;
  p.total_s = run.makespan.seconds();
  p.forward_s = st.breakdown.forward_s, p.backward_s = st.breakdown.backward_s;
  p.recompute_s = st.breakdown.recompute_s;
  for (Channel c : {Channel::tp, Channel::cp, Channel::ep}) p.exposed[c] = st.breakdown.comm_exposed[c], p.busy[c] = st.busy[c];
  p.slowdown_s = st.slowdown_s;
  sim::Time last_other{}, first_ep = run.makespan;
  const sim::TaskGraph& graph = g.graph();
  for (std::size_t i = 0; i < graph.size(); ++i) {
    if (static_cast<TaskKind>(graph[sim::TaskId(i)].tag) != TaskKind::ep_comm) last_other = std::max(last_other, run.timing[i].end);
    else if (run.timing[i].end > run.timing[i].start) first_ep = std::min(first_ep, run.timing[i].start);
  }
  p.ep_lead_s = first_ep.seconds();
  // The first exchanges' exposed time (from the first start to the next kernel's), and each EP
  // task's link load, the part after the last other task (its overlap with the tail, at its mean
  // rate) in the tail's.
  sim::Time next_kernel = run.makespan;
  for (std::size_t i = 0; i < graph.size(); ++i) {
    const sim::TaskView task = graph[sim::TaskId(i)];
    const sim::TaskTiming& tm = run.timing[i];
    const auto kind = static_cast<TaskKind>(task.tag);
    if (tm.end <= tm.start) continue;
    if (is_kernel_kind(kind) && tm.start >= first_ep) next_kernel = std::min(next_kernel, tm.start);
    if (kind != TaskKind::ep_comm) continue;
    const double in_tail = (tm.end - std::max(tm.start, last_other)).seconds() / (tm.end - tm.start).seconds();
    for (const sim::ResourceUse& u : task.uses) {
      const int c = u.resource - kLinkBase;
      if (c < 0 || c >= topologies::kLinkClasses) continue;
      const double load = task.work.seconds() * u.demand;
      p.ep_link_s[static_cast<std::size_t>(c)] += load * (1 - std::max(0.0, in_tail));
      p.tail_link_s[static_cast<std::size_t>(c)] += load * std::max(0.0, in_tail);
    }
  }
  p.ep_first_s = std::max(0.0, (std::min(next_kernel, last_other) - first_ep).seconds());
  // The tail is not part of the unit's merged task: the step builder runs it as a task of its own
  // on the EP stream (StepGraph::add_tail), so it is taken out of the total and the EP tallies.
  p.tail_s = std::max(0.0, (run.makespan - last_other).seconds());
  p.total_s -= p.tail_s;
  p.exposed[Channel::ep] = std::max(0.0, p.exposed[Channel::ep] - p.tail_s);
  p.busy[Channel::ep] = std::max(0.0, p.busy[Channel::ep] - p.tail_s);
  return p;
}

}  // namespace clustersim::models
