#include "models/step.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>

#include "models/layer_ops_host.hpp"
#include "models/pipeline.hpp"
#include "models/detail/pipeline_steady.hpp"
#include "models/detail/step_attribution.hpp"
#include "models/detail/step_gradients.hpp"
#include "models/detail/step_graph.hpp"
#include "models/detail/step_merge.hpp"
#include "models/step_program.hpp"
#include "models/step_program_moe.hpp"
#include "models/detail/step_sharding.hpp"
#include "topologies/network.hpp"

namespace clustersim::models {

namespace {

using sim::TaskId;
using topologies::Collective;
using topologies::GroupDim;

/// A stage's gradient plan and the DP traffic state while its passes are added.
struct StageState {
  GradientPlan grads;
  std::vector<TaskId> gather_done;  // per bucket, ZeRO-1/2 parameter all-gather
  std::size_t next_bucket = 0;
  int bucket_round = -1;
  std::vector<std::size_t> held;  // buckets filled while reduction is not overlapped
  std::vector<TaskId> reduce_done;
  TaskId block_end_prev = -1, block_end_cur = -1;  // ZeRO-3 prefetch window
  double expert_params = 0;  // routed experts on this rank, reduced over the expert-DP group
  double expert_params_reduced = 0;  // of them, launched by their units' backward (overlap on)
};

/// Builds one step: the pipeline's passes over the block program, with the DP / ZeRO traffic
/// the sharding policy ties to them, the pipeline sends between stages, the tied-embedding sync
/// and the optimizer; then runs it and attributes the time.
class StepBuilder {
 public:
  StepBuilder(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu,
              const StepCosts& c, const topologies::Network& net, std::vector<TimelineEntry>* timeline,
              int micro_batches, const BlockProgram& program, PassMerger& merger)
      : m_(m),
        t_(t),
        p_(p),
        gpu_(gpu),
        c_(c),
        net_(net),
        timeline_(timeline),
        fine_(timeline != nullptr),
        mbs_(micro_batches),
        vlayers_(virtual_stage_layers(m.layers, p)),
        policy_(t, p, micro_batches),
        program_(program),
        g_(p.pp, gpu, t, timeline != nullptr),
        merger_(merger) {}

  /// `sample`: a steady-state sample, which also records its tail (StepTally::tail).
  StepTally run(bool sample = false) {
    for (int s = 0; s < p_.pp; ++s) {
      StageState& st = stages_.emplace_back();
      st.grads = plan_gradients(m_, t_, p_, c_, vlayers_, s, policy_.bucket_cap());
      st.gather_done.assign(st.grads.buckets.size(), -1);
      st.expert_params = stage_moe_layers(s) * expert_layer_params(m_, p_);
    }
    if (policy_.gathers_buckets() && t_.overlap_param_gather)
      for (int s = 0; s < p_.pp; ++s) {
        // Parameters updated by the last step arrive bucket by bucket in forward order,
        // overlapping the first micro-batch's forward.
        auto& st = stage(s);
        for (std::size_t i = st.grads.buckets.size(); i-- > 0;)
          st.gather_done[i] = add_dp(s, TaskKind::dp_param_gather, Collective::all_gather,
                                     st.grads.buckets[i].params * weight_bytes(), {});
      }
    emit_pipeline(p_, mbs_, [this](int s, const PipeOp& op, std::vector<TaskId> deps) {
      return emit_pass(s, op, std::move(deps));
    });
    g_.set_label(-1, -3);
    if (m_.tied_embeddings && p_.pp > 1) sync_tied_embedding();
    for (int s = 0; s < p_.pp; ++s) finish_stage(s);
    return measure(sample);
  }

 private:
  StageState& stage(int s) { return stages_[static_cast<std::size_t>(s)]; }
  // MoE layers on stage s, its MTP modules included.
  int stage_moe_layers(int s) const { return models::stage_moe_layers(m_, p_, vlayers_, s); }
  // Expert gradients, reduced (ZeRO ≥ 1: reduce-scattered) over the expert-data-parallel group.
  // Megatron's DDP keeps them in buffers of their own (the expert-data-parallel group's) and, with
  // overlap_grad_reduce, launches each bucket as the backward fills it, like the dense ones
  // (distributed_data_parallel.py, param_and_grad_buffer.py): a layer's experts go when its
  // backward is done (emit_unit). What no unit launched (overlap off, or no per-unit pass) goes
  // here, once the stage's last backward is done.
  void reduce_expert_grads(int s) {
    auto& st = stage(s);
    const double left = st.expert_params - st.expert_params_reduced;
    if (left <= 0 || p_.edp() <= 1 || t_.free_comm.dp) return;
    st.reduce_done.push_back(reduce_experts(s, left, g_.stage(s).last_compute));
  }
  TaskId reduce_experts(int s, double params, TaskId after) {
    const Collective c = policy_.zero() >= 1 ? Collective::reduce_scatter : Collective::all_reduce;
    const auto cost = net_.cost(c, GroupDim::edp, units::Bytes(params * grad_bytes()));
    const TaskId deps[] = {after};
    return g_.add_transfer(s, kDpReduceStream, TaskKind::dp_grad_reduce, cost, deps, true);
  }
  // Expert parameters whose gradients unit `u` completes: its MoE layer's, or the MoE MTP
  // modules' with the LM head (they ride with it, plan_gradients).
  double unit_expert_params(const PassUnit& u) const {
    if (u.program == kHeadUnit) {
      int n = 0;
      for (int j = 0; j < m_.mtp_layers; ++j) n += m_.moe_layer(m_.layers + j) ? 1 : 0;
      return n * expert_layer_params(m_, p_);
    }
    if (u.program == kEmbeddingUnit || u.label < 0) return 0;
    return m_.moe_layer(u.label) ? expert_layer_params(m_, p_) : 0;
  }
  // A unit's expert gradients, reduced as its backward completes them (the last micro-batch's,
  // or every one's where the dense buckets go every micro-batch too).
  void reduce_unit_experts(int s, const PassUnit& u, TaskId done) {
    if (!t_.overlap_grad_reduce || p_.edp() <= 1 || t_.free_comm.dp) return;
    const double params = unit_expert_params(u);
    if (params <= 0) return;
    auto& st = stage(s);
    st.reduce_done.push_back(reduce_experts(s, params, done));
    st.expert_params_reduced += params;
  }
  int vstages() const { return p_.pp * p_.vpp; }
  double weight_bytes() const { return hardware::storage_bytes(t_.precision); }
  double grad_bytes() const { return t_.grad_reduce_fp32 ? 4.0 : 2.0; }
  int first_layer(int vs) const {
    int first = 0;
    for (int v = 0; v < vs; ++v) first += vlayers_[static_cast<std::size_t>(v)];
    return first;
  }

  // The units of virtual stage vs's forward or backward pass, in execution order.
  std::vector<PassUnit> units_of(int vs, bool forward) const {
    const int layers = vlayers_[static_cast<std::size_t>(vs)], first = first_layer(vs);
    const bool has_embedding = vs == 0, has_head = vs == vstages() - 1;
    auto block = [&](int l) {
      return PassUnit{program_.block_kind.empty() ? 0 : program_.block_kind[static_cast<std::size_t>(first + l)], l,
                      first + l};
    };
    std::vector<PassUnit> out;
    if (forward) {
      if (has_embedding) out.push_back({kEmbeddingUnit, layers, -1});
      for (int l = 0; l < layers; ++l) out.push_back(block(l));
      if (has_head) out.push_back({kHeadUnit, -1, -2});
    } else {
      if (has_head) out.push_back({kHeadUnit, -1, -2});
      for (int l = layers - 1; l >= 0; --l) out.push_back(block(l));
      if (has_embedding) out.push_back({kEmbeddingUnit, layers, -1});
    }
    return out;
  }

  std::vector<TaskId> emit_pass(int s, const PipeOp& op, std::vector<TaskId> deps) {
    const int vs = p_.vstage_of(s, op.chunk);
    const bool forward = op.forward(), wgrad = op.kind == PassKind::weight_grad;
    // A W pass reads what its own B left on this stage; the compute stream's order already puts
    // it after that B, so it waits for nothing else (not for B's send to the previous stage).
    if (wgrad) deps.clear();
    g_.set_label(op.micro_batch, -3);
    auto& cached = pass_units_[static_cast<std::size_t>(2 * vs + (forward ? 1 : 0))];
    if (cached.empty()) cached = units_of(vs, forward);  // every pass has at least one unit
    const std::vector<PassUnit>& units = cached;
    const bool alone = unpaired(op);
    if (!fine_ && !policy_.unit_traffic(op)) {
      // Consecutive kernels and TP / CP transfers whose durations are already known run as one
      // task, which the other streams (DP, PP) still slow down through the shared SMs.
      add_merged(s, task_kind(op.kind), merger_.pass(vs, op.kind, units, alone), &deps);
    } else {
      for (const PassUnit& u : units) {
        g_.set_label(op.micro_batch, u.label);
        emit_unit(s, op, unit_index(stage(s).grads, p_, vlayers_, s, op.chunk, u.which), u, alone, &deps);
      }
    }
    const bool ends_model = forward ? vs == vstages() - 1 : vs == 0;
    // The pass's output goes in the input's storage (consumed above): no allocation per pass.
    std::vector<TaskId> out = std::move(deps);
    out.clear();
    // The V's turn (DualPipeV: the last rank's first chunk feeds its second) hands over in place.
    const int to = ends_model ? s : p_.rank_of(forward ? vs + 1 : vs - 1);
    if (wgrad || ends_model || to == s) g_.flush(s, &out);
    else out.push_back(send(s, to, forward));
    return out;
  }

  // Whether pass `op` runs on the program of a pass without a partner (BlockProgram::unpaired,
  // PipeOp::paired). W passes carry no exchange.
  bool unpaired(const PipeOp& op) const { return program_.unpaired && op.kind != PassKind::weight_grad && !op.paired; }

  // One merged task on the compute stream for a profiled pass or unit.
  void add_merged(int s, TaskKind kind, int profile, std::vector<TaskId>* deps) {
    const double seconds = merger_.total_s(profile);
    const PassProfile& pr = merger_.profiles()[static_cast<std::size_t>(profile)];
    // Its exposed EP exchanges run as a task of their own on the stage's links, where the stage's
    // DP and PP transfers slow them down and are slowed by them as on the kernel-level graph.
    const bool on_links = std::any_of(pr.ep_link_s.begin(), pr.ep_link_s.end(), [](double l) { return l > 0; });
    const double exchanges = on_links ? std::clamp(pr.exposed[Channel::ep], 0.0, seconds) : 0.0;
    const double rest = seconds - exchanges;
    const double transfers_alone =
        pr.exposed[Channel::tp] + pr.exposed[Channel::cp] + pr.exposed[Channel::ep] - exchanges;
    const double kernel_share = rest > 0 ? std::clamp(1 - transfers_alone / rest, 0.0, 1.0) : 1.0;
    // The EP stream is in order: the pass's first exchange (ep_lead_s in) queues behind the
    // previous merged task's EP tail. Only an exposed first exchange holds the kernels behind it;
    // a hidden one (A2A overlap) waits on the EP stream while the kernels go on.
    TaskId& tail = g_.stage(s).tail;
    const TaskId previous = tail;
    const bool held = previous >= 0 && pr.ep_lead_s < seconds && pr.ep_first_s > 0;
    if (pr.ep_lead_s < seconds) tail = -1;
    if (!held && exchanges <= 0) {
      const TaskId id = g_.add_compute(s, kind, seconds, deps, false, kernel_share);
      if (seconds > 0) g_.mark_merged(id, profile);
      if (pr.tail_s > 0) g_.add_tail(s, pr.tail_s, pr.tail_link_s);
      return;
    }
    // Its kernels up to the first exchange; the first exposed exchanges; half the rest of its
    // kernels; its other exposed exchanges; the other half. Where the exchanges sit decides which
    // of the stage's transfers they meet: a backward block starts with the combine's gradient,
    // right when the previous block's gradient bucket is reduced. Each exchange task loads the
    // links at the exchanges' mean rate.
    const double lead = std::clamp(pr.ep_lead_s, 0.0, rest);
    const double first = std::min(exchanges, pr.ep_first_s), second = exchanges - first;
    const double busy = std::max(pr.busy[Channel::ep], exchanges);
    std::array<double, topologies::kLinkClasses> first_load{}, second_load{};
    for (std::size_t c = 0; c < first_load.size(); ++c)
      first_load[c] = pr.ep_link_s[c] * first / busy, second_load[c] = pr.ep_link_s[c] * second / busy;
    bool marked = lead > 0;
    if (marked) g_.mark_merged(g_.add_compute(s, kind, lead, deps, true, kernel_share), profile);
    std::vector<TaskId> after(deps->begin(), deps->end());
    deps->clear();
    if (held) after.push_back(previous);
    if (first > 0) g_.add_exchanges(s, first, first_load, &after);
    const int halves = second > 0 ? 2 : 1;
    for (int half = 0; half < halves; ++half) {
      if (half == 1) g_.add_exchanges(s, second, second_load, &after);
      const TaskId before = g_.stage(s).last_compute;
      const TaskId id = g_.add_compute(s, kind, (rest - lead) / halves, &after, !marked, kernel_share);
      if (id != before) g_.mark_merged(id, profile, marked), marked = true;
    }
    if (pr.tail_s > 0) g_.add_tail(s, pr.tail_s, pr.tail_link_s);
  }

  // One gradient unit's pass, with the ZeRO traffic around it.
  void emit_unit(int s, const PipeOp& op, int unit, const PassUnit& u, bool alone, std::vector<TaskId>* deps) {
    auto& st = stage(s);
    const double params = st.grads.unit_params[static_cast<std::size_t>(unit)];
    if (policy_.gathers_unit(op)) {
      // FSDP / ZeRO-3: gather this unit's parameters, issued when the unit before the previous
      // one has finished (one unit of prefetch).
      const double bytes = params * weight_bytes();
      deps->push_back(st.block_end_prev >= 0
                          ? add_dp(s, TaskKind::dp_param_gather, Collective::all_gather, bytes, {st.block_end_prev})
                          : add_dp(s, TaskKind::dp_param_gather, Collective::all_gather, bytes, {}));
    } else if (policy_.waits_for_bucket_gather(op)) {
      const TaskId gathered = st.gather_done[static_cast<std::size_t>(st.grads.bucket_of_unit[static_cast<std::size_t>(unit)])];
      if (gathered >= 0) deps->push_back(gathered);
    }
    // A block's recomputed forward runs right before its backward, once its parameters are here.
    if (fine_) emit_unit_body(g_, s, program_.for_pass(alone), RecomputeRule(t_), u, op.kind, deps);
    else add_merged(s, task_kind(op.kind), merger_.unit(u, op.kind, alone), deps);
    const TaskId done = g_.stage(s).last_compute;
    st.block_end_prev = st.block_end_cur;
    st.block_end_cur = done;
    if (!policy_.produces_grads(op) || policy_.dp_ranks() <= 1 || !policy_.reduces_in(op)) return;
    if (policy_.zero() == 3) {
      st.reduce_done.push_back(add_dp(s, TaskKind::dp_grad_reduce, Collective::reduce_scatter, params * grad_bytes(), {done}));
    } else {
      launch_ready_buckets(s, op, unit, done);  // reduced (ZeRO-2: reduce-scattered) as they fill
    }
    reduce_unit_experts(s, u, done);
  }

  void launch_ready_buckets(int s, const PipeOp& op, int unit, TaskId grad_done) {
    auto& st = stage(s);
    const auto& gp = st.grads;
    const int round = op.micro_batch * p_.vpp + op.chunk;
    const auto c = static_cast<std::size_t>(op.chunk);
    if (st.bucket_round != round) {  // a new round of the chunk's buckets (ZeRO-2: every micro-batch)
      st.bucket_round = round;
      st.next_bucket = gp.chunk_bucket_begin[c];
    }
    const bool last_unit = unit + 1 == int(gp.unit_params.size());
    for (; st.next_bucket < gp.chunk_bucket_end[c] && gp.buckets[st.next_bucket].ready_unit <= unit; ++st.next_bucket) {
      if (!t_.overlap_grad_reduce && !last_unit && policy_.zero() != 2) {
        st.held.push_back(st.next_bucket);
        continue;
      }
      for (auto b : st.held) st.reduce_done.push_back(reduce_bucket(s, b, grad_done));
      st.held.clear();
      st.reduce_done.push_back(reduce_bucket(s, st.next_bucket, grad_done));
    }
  }

  TaskId reduce_bucket(int s, std::size_t b, TaskId after) {
    const double bytes = stage(s).grads.buckets[b].params * grad_bytes();
    return add_dp(s, TaskKind::dp_grad_reduce, policy_.zero() >= 1 ? Collective::reduce_scatter : Collective::all_reduce,
                  bytes, {after});
  }

  // Tied embeddings with pp > 1: the first stage's word embedding and the last stage's LM head
  // are copies; their gradients are all-reduced between the two after the backward passes
  // (Megatron finalize_model_grads, _allreduce_embedding_grads), over the PP group's first and
  // last ranks.
  void sync_tied_embedding() {
    const int last = p_.pp - 1;
    const double bytes = double(m_.padded_vocab(p_.tp)) * m_.hidden / p_.tp * grad_bytes();
    const auto cost = net_.cost(Collective::all_reduce, GroupDim::pp, units::Bytes(bytes), {0, last});
    std::vector<TaskId> deps = g_.flush(0);
    for (TaskId d : g_.flush(last)) deps.push_back(d);
    const TaskId id = g_.add_transfer(0, kDpReduceStream, TaskKind::dp_grad_reduce, cost, deps, false);
    stage(0).reduce_done.push_back(id);
    stage(last).reduce_done.push_back(id);
  }

  // The step's scalar all-reduces (gradient norm, loss: kHostSyncsPerStep), on the network like
  // every transfer; the data-parallel group stands for "all ranks" (its latency dominates).
  double scalar_all_reduces_s() const {
    if (t_.ideal.host) return 0;
    return kHostSyncsPerStep * net_.cost(Collective::all_reduce, GroupDim::dp, units::Bytes(8.0)).time.si();
  }

  void finish_stage(int s) {
    auto& st = stage(s);
    auto& stream = g_.stage(s);
    reduce_expert_grads(s);
    const double experts = st.expert_params / (policy_.zero() >= 1 ? p_.edp() : 1);
    // The optimizer's HBM traffic, plus the step's fixed work (gradient norm, scalar all-reduces, host syncs).
    const double opt_s = optimizer_update_s(gpu_, c_, t_, policy_.local_params(st.grads.params) + experts) + scalar_all_reduces_s();
    std::vector<TaskId> deps = st.reduce_done;
    for (TaskId w : stream.wait_next) deps.push_back(w);
    for (TaskId w : stream.wait_later) deps.push_back(w);
    stream.wait_next.clear(), stream.wait_later.clear();
    const TaskId opt = g_.add_compute(s, TaskKind::optimizer, opt_s, &deps);
    if (policy_.gathers_buckets() && !t_.overlap_param_gather) {
      std::vector<TaskId> gathers;
      for (std::size_t i = st.grads.buckets.size(); i-- > 0;)
        gathers.push_back(add_dp(s, TaskKind::dp_param_gather, Collective::all_gather,
                                 st.grads.buckets[i].params * weight_bytes(), {opt}));
      g_.add_compute(s, TaskKind::sync, 0.0, &gathers, true);
    }
  }

  // Activation (forward) or its gradient (backward) to the next virtual stage, over the PP
  // group's link between the two stages. Megatron sends 1/tp of the [b, s/cp, h] tensor per TP
  // rank (scatter-gather optimization, Narayanan et al. 2021 §4.1; with SP the tensor is
  // already sequence-sharded).
  TaskId send(int s, int to, bool forward) {
    // A send and its mirror image cross the same kinds of links at the same rates (the fabric is
    // symmetric), so both directions of a stage pair share one routed plan.
    const int lo = std::min(s, to), hi = std::max(s, to);
    auto [at, fresh] = send_costs_.try_emplace({lo, hi});
    if (fresh) at->second = net_.cost(Collective::send_recv, GroupDim::pp, units::Bytes(c_.activation_bytes / p_.tp), {lo, hi});
    const std::size_t first = g_.size();
    send_deps_.clear();
    g_.flush(s, &send_deps_);
    const TaskId id = g_.add_transfer(s, forward ? kPpFwdStream : kPpBwdStream, TaskKind::pp_send, at->second,
                                      send_deps_, false);
    g_.mark_send(first, to);
    if (!p_.pp_comm_overlap) g_.stage(s).wait_next.push_back(id);
    return id;
  }

  // One DP collective (all DP groups run it at once); sizes repeat, so costs are cached.
  TaskId add_dp(int s, TaskKind kind, Collective c, double bytes, std::initializer_list<TaskId> after) {
    auto [at, fresh] = dp_costs_.try_emplace({int(c), bytes});
    if (fresh && !t_.free_comm.dp) at->second = net_.cost(c, GroupDim::dp, units::Bytes(bytes));
    const Stream stream = kind == TaskKind::dp_param_gather ? kDpGatherStream : kDpReduceStream;
    return g_.add_transfer(s, stream, kind, at->second, std::span<const TaskId>(after.begin(), after.size()), true);
  }

  StepTally measure(bool sample) {
    const sim::RunResult run = sim::run_task_graph(g_.graph());
    if (timeline_)
      for (std::size_t i = 0; i < g_.size(); ++i) {
        const auto& tm = run.timing[i];
        if (tm.end <= tm.start) continue;
        TimelineEntry e = g_.labels()[i];
        e.start_s = tm.start.seconds(), e.end_s = tm.end.seconds();
        timeline_->push_back(e);
      }
    StepTally r;
    r.stages = tally_stages(g_, run, p_.pp, merger_.profiles().size(), !p_.pp_comm_overlap);
    r.makespan_ps = run.makespan.ps();
    r.events = static_cast<std::int64_t>(run.events);
    r.tasks = static_cast<std::int64_t>(g_.size());
    r.grad_buckets = int(stages_.front().grads.buckets.size());
    if (sample) r.tail = tail_signature(g_.graph(), run);
    return r;
  }

  const ModelSpec& m_;
  const TrainingSpec& t_;
  const ParallelSpec& p_;
  const hardware::GpuSpec& gpu_;
  const StepCosts& c_;
  const topologies::Network& net_;
  std::vector<TimelineEntry>* timeline_;
  const bool fine_;  ///< one task per kernel group and transfer (timelines); else merged passes
  const int mbs_;
  const std::vector<int> vlayers_;
  const ShardingPolicy policy_;
  const BlockProgram& program_;
  StepGraph g_;
  PassMerger& merger_;
  std::vector<StageState> stages_;
  std::vector<std::vector<PassUnit>> pass_units_ = std::vector<std::vector<PassUnit>>(2 * static_cast<std::size_t>(vstages()));
  std::map<std::pair<int, double>, topologies::CollectiveTime> dp_costs_;
  std::map<std::pair<int, int>, topologies::CollectiveTime> send_costs_;  ///< by (from, to) stage
  std::vector<TaskId> send_deps_;  ///< send()'s scratch: what a send waits for
};

}  // namespace

StepResult simulate_step(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                         const hardware::GpuSpec& gpu, const StepCosts& costs, const topologies::Network& network,
                         std::vector<TimelineEntry>* timeline) {
  if (!timeline)
    if (auto r = simulate_step_steady(m, t, p, gpu, costs, network)) return std::move(*r);
  return simulate_step_full(m, t, p, gpu, costs, network, timeline);
}

std::optional<StepResult> simulate_step_steady(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                               const hardware::GpuSpec& gpu, const StepCosts& costs,
                                               const topologies::Network& network) {
  const int mbs = t.micro_batches(p);
  if (!steady_samples(p, mbs)) return std::nullopt;
  const BlockProgram program = block_program(m, t, p, gpu, costs, network);
  PassMerger merger(program, t, gpu);
  for (int attempt = 0; attempt < kSteadyAttempts; ++attempt) {
    const auto samples = steady_samples(p, mbs, attempt);
    if (!samples) return std::nullopt;
    std::array<StepTally, 3> at;
    for (int i = 0; i < 3; ++i)
      at[static_cast<std::size_t>(i)] =
          StepBuilder(m, t, p, gpu, costs, network, nullptr, samples->m0 + i * samples->period, program, merger)
              .run(true);
    if (const auto x = extrapolate_tally(at, (mbs - samples->m0) / samples->period))
      return step_result(*x, merger.profiles(), mbs);
  }
  return std::nullopt;
}

StepResult simulate_step_full(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                              const hardware::GpuSpec& gpu, const StepCosts& costs, const topologies::Network& network,
                              std::vector<TimelineEntry>* timeline) {
  const BlockProgram program = block_program(m, t, p, gpu, costs, network);
  PassMerger merger(program, t, gpu);
  const int mbs = t.micro_batches(p);
  return step_result(StepBuilder(m, t, p, gpu, costs, network, timeline, mbs, program, merger).run(), merger.profiles(), mbs);
}

}  // namespace clustersim::models
