#include "models/detail/pipeline_steady.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace clustersim::models {

namespace {

// a + k·(b − a) when c − b == b − a exactly; false otherwise.
bool affine(std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t k, std::int64_t* out) {
  if (c - b != b - a) return false;
  *out = a + k * (b - a);
  return true;
}

bool affine_all(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b,
                const std::vector<std::int64_t>& c, std::int64_t k, std::vector<std::int64_t>* out) {
  // Profiles first used at a later sample count as zero at the earlier ones.
  const std::size_t n = std::max({a.size(), b.size(), c.size()});
  auto at = [](const std::vector<std::int64_t>& v, std::size_t i) { return i < v.size() ? v[i] : 0; };
  out->assign(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    if (!affine(at(a, i), at(b, i), at(c, i), k, &(*out)[i])) return false;
  return true;
}

}  // namespace

StepResult step_result(const StepTally& t, const std::vector<PassProfile>& profiles, int micro_batches) {
  const bool pipelined = t.stages.size() > 1;
  std::vector<StageTime> st;
  for (const StageTally& s : t.stages) st.push_back(stage_time(s, profiles, pipelined));
  std::size_t pick = 0;
  for (std::size_t s = 1; s < st.size(); ++s)
    if (st[s].compute_busy_s > st[pick].compute_busy_s) pick = s;
  StepResult r;
  r.micro_batches = micro_batches;
  r.grad_buckets = t.grad_buckets;
  r.tasks = static_cast<std::size_t>(t.tasks);
  r.events = static_cast<std::uint64_t>(t.events);
  r.step_time_s = sim::Time::from_ps(t.makespan_ps).seconds();
  r.stage = int(pick);
  r.breakdown = st[pick].breakdown;
  for (const auto& x : st) r.stages.push_back(x.breakdown);
  r.compute_slowdown_s = st[pick].slowdown_s;
  r.comm_busy = st[pick].busy;
  return r;
}

std::vector<std::vector<std::int64_t>> tail_signature(const sim::TaskGraph& graph, const sim::RunResult& run) {
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(graph.num_streams()));
  const std::int64_t half = run.makespan.ps() / 2;
  for (std::size_t i = graph.size(); i-- > 0;) {
    const std::int64_t before_end = (run.makespan - run.timing[i].end).ps();
    if (before_end <= half) out[static_cast<std::size_t>(graph[sim::TaskId(i)].stream)].push_back(before_end);
  }
  return out;
}

namespace {

// The tails within `window` of the end, in a canonical order (ties between tasks of a stream
// ending together may come in any order of addition).
std::vector<std::vector<std::int64_t>> window(const std::vector<std::vector<std::int64_t>>& tail, std::int64_t w) {
  std::vector<std::vector<std::int64_t>> out;
  for (const auto& v : tail) {
    auto& o = out.emplace_back();
    for (std::int64_t x : v)
      if (x < w) o.push_back(x);
    std::sort(o.begin(), o.end());
  }
  return out;
}

}  // namespace

std::optional<SteadySamples> steady_samples(const ParallelSpec& p, int micro_batches, int attempt) {
  // Attempts start at 2·pp, then 3·pp: deep pipelines with uneven stages, zb-h1's deferred W
  // passes and long CP rings can still drift at 2·pp (Llama-3 70B, pp 64, no recompute: not
  // affine at m0 = 128, exact at 192).
  std::array<int, kSteadyAttempts> starts = {2 * p.pp, 3 * p.pp};  // no allocation: every step asks
  SteadySamples s;
  if ((p.schedule == PipelineSchedule::one_f_one_b || p.schedule == PipelineSchedule::zb_h1) && p.vpp == 1) {
    // zb-h1 as 1F1B: its W deferral (stage i: i micro-batches) ends within the first pp. pp is
    // the first count with the full warm-up on every stage, but with uneven stages the step's
    // slope still changes a few micro-batches later (pp 32: at pp + 4 to pp + 8; starting at
    // pp + 8 fails for most 70B layouts at pp 32 and 64, which then cost more than the step).
    // pp 1: gradient accumulation, FSDP gathers in every micro-batch.
    s.period = 1;
    for (int& m0 : starts) m0 = std::max(m0, 4);
  } else if (p.schedule == PipelineSchedule::zbv || p.schedule == PipelineSchedule::dualpipev) {
    // The V schedules' steady loops (ZB-V's F0 B0 W0 F1 B1 W1, DualPipeV's step 4 F0 B1 F1 B0)
    // take one micro-batch per chunk per turn; DualPipeV's warm-up alone spans 2·pp.
    s.period = 1;
  } else if (p.schedule == PipelineSchedule::interleaved && p.vpp > 1 && micro_batches % p.pp == 0) {
    s.period = p.pp;  // from 2·pp: m == pp is a special case of the schedule (all forwards first)
  } else {
    return std::nullopt;
  }
  if (attempt < 0 || attempt >= int(starts.size())) return std::nullopt;
  s.m0 = starts[std::size_t(attempt)];
  // Three samples cost about 3·(m0 + period) micro-batches; take them only when that is at most
  // 3/4 of the step (so the failure case, both attempts' samples plus the step, stays within 2.5x).
  if (micro_batches < 4 * (s.m0 + s.period)) return std::nullopt;
  return s;
}

std::optional<StepTally> extrapolate_tally(const std::array<StepTally, 3>& at, std::int64_t k) {
  const StepTally &a = at[0], &b = at[1], &c = at[2];
  if (a.grad_buckets != b.grad_buckets || b.grad_buckets != c.grad_buckets) return std::nullopt;
  const std::int64_t w = a.makespan_ps / 4;
  const auto ta = window(a.tail, w);
  if (ta != window(b.tail, w) || ta != window(c.tail, w)) return std::nullopt;
  if (a.stages.size() != b.stages.size() || b.stages.size() != c.stages.size()) return std::nullopt;
  StepTally x;
  x.grad_buckets = a.grad_buckets;
  if (!affine(a.makespan_ps, b.makespan_ps, c.makespan_ps, k, &x.makespan_ps) ||
      !affine(a.events, b.events, c.events, k, &x.events) || !affine(a.tasks, b.tasks, c.tasks, k, &x.tasks))
    return std::nullopt;
  x.stages.resize(a.stages.size());
  for (std::size_t s = 0; s < a.stages.size(); ++s) {
    const StageTally &sa = a.stages[s], &sb = b.stages[s], &sc = c.stages[s];
    StageTally& sx = x.stages[s];
    for (std::size_t f = 0; f < sx.ps.size(); ++f)
      if (!affine(sa.ps[f], sb.ps[f], sc.ps[f], k, &sx.ps[f])) return std::nullopt;
    if (!affine_all(sa.merged_n, sb.merged_n, sc.merged_n, k, &sx.merged_n) ||
        !affine_all(sa.merged_excess, sb.merged_excess, sc.merged_excess, k, &sx.merged_excess))
      return std::nullopt;
  }
  return x;
}

}  // namespace clustersim::models
