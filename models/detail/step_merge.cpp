#include "models/detail/step_merge.hpp"

#include <algorithm>

namespace clustersim::models {

void emit_unit_body(StepGraph& g, int s, const BlockProgram& prog, const RecomputeRule& recompute, const PassUnit& u,
                    PassKind kind, std::vector<sim::TaskId>* deps) {
  const UnitProgram& unit = u.program == kEmbeddingUnit ? prog.embedding
                            : u.program == kHeadUnit    ? prog.head
                                                        : prog.blocks[static_cast<std::size_t>(u.program)];
  const bool block = u.program >= 0, forward = kind == PassKind::forward;
  if (kind == PassKind::weight_grad) {
    g.emit(s, unit.weight_grad, TaskKind::weight_grad, deps);
    return;
  }
  if (!forward && recompute.reruns_forward(u))
    g.emit(s, unit.forward, TaskKind::recompute, deps);
  else if (!forward && block && recompute.mode == Recompute::selective)
    g.add_compute(s, TaskKind::recompute, prog.selective_recompute_of(u.program), deps);
  g.emit(s, forward ? unit.forward : unit.backward, forward ? TaskKind::forward : TaskKind::backward, deps);
}

int PassMerger::unit(const PassUnit& u, PassKind kind, bool alone) {
  alone = alone && prog_.unpaired;  // one profile where both programs are the same
  const std::size_t reruns = recompute_.reruns_forward(u) ? 1 : 0;
  const auto slot =
      ((static_cast<std::size_t>(u.program - kHeadUnit) * 2 + reruns) * 3 + static_cast<std::size_t>(kind)) * 2 +
      (alone ? 1 : 0);
  if (const int known = entry(units_, slot); known >= 0) return known;
  StepGraph graph(1, gpu_, t_, false);
  std::vector<sim::TaskId> deps;
  emit_unit_body(graph, 0, prog_.for_pass(alone), recompute_, u, kind, &deps);
  profiles_.push_back(profile_of(graph, sim::run_task_graph(graph.graph())));
  return entry(units_, slot) = int(profiles_.size()) - 1;
}

int PassMerger::pass(int vs, PassKind kind, const std::vector<PassUnit>& units, bool alone) {
  alone = alone && prog_.unpaired;
  const auto slot = (static_cast<std::size_t>(vs) * 3 + static_cast<std::size_t>(kind)) * 2 + (alone ? 1 : 0);
  if (const int known = entry(passes_, slot); known >= 0) return known;
  // Back to back, each unit's compute starts when the previous unit's compute is done: a detached
  // exchange's tail (A2A overlap) runs beside the next unit, as on the kernel-level graph; the last
  // unit's tail stays the pass's (run apart, StepGraph::add_tail). The exchanges still queue on
  // their stream: the pass lasts at least their total.
  PassProfile sum;
  double tails = 0;
  bool exchanged = false;  // a unit so far has an EP exchange (the pass's ep_lead_s is set)
  for (const PassUnit& unit_ref : units) {
    const PassProfile u = profiles_[static_cast<std::size_t>(unit(unit_ref, kind, alone))];
    // The EP stream is in order: this unit's first exchange waits for the previous unit's tail,
    // which runs beside this unit's kernels until then and holds its exchange kernels' SMs: the
    // kernels run at 1 − share of the SMs meanwhile (as on the kernel-level graph), and the
    // exchange starts that much later in the unit.
    const double stolen = std::min(sum.tail_s, u.ep_lead_s) * ep_sm_share(gpu_, t_);
    const double delay = std::max(0.0, sum.tail_s - u.ep_lead_s - stolen);
    (u.forward_s > 0 ? sum.forward_s : u.backward_s > 0 ? sum.backward_s : sum.recompute_s) += stolen;
    sum.total_s += stolen, sum.slowdown_s += stolen;
    if (!exchanged && u.ep_lead_s < u.total_s + u.tail_s)
      sum.ep_lead_s = sum.total_s + u.ep_lead_s, sum.ep_first_s = u.ep_first_s + delay, exchanged = true;
    sum.total_s += u.total_s + delay, sum.exposed[Channel::ep] += delay, sum.tail_s = u.tail_s, tails += u.tail_s;
    sum.forward_s += u.forward_s, sum.backward_s += u.backward_s, sum.recompute_s += u.recompute_s;
    for (Channel c : {Channel::tp, Channel::cp, Channel::ep}) sum.exposed[c] += u.exposed[c], sum.busy[c] += u.busy[c];
    sum.slowdown_s += u.slowdown_s;
    // An earlier unit's tail runs beside this unit: its link load is the pass's.
    for (std::size_t c = 0; c < sum.ep_link_s.size(); ++c)
      sum.ep_link_s[c] += u.ep_link_s[c] + sum.tail_link_s[c], sum.tail_link_s[c] = u.tail_link_s[c];
  }
  sum.busy[Channel::ep] += tails - sum.tail_s;  // the hidden tails: busy beside the next unit's kernels
  const double queued = std::max(0.0, sum.busy[Channel::ep] - sum.total_s);
  sum.total_s += queued, sum.exposed[Channel::ep] += queued;
  if (!exchanged) sum.ep_lead_s = sum.total_s + sum.tail_s;
  profiles_.push_back(sum);
  return entry(passes_, slot) = int(profiles_.size()) - 1;
}

}  // namespace clustersim::models
