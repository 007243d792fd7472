#include "models/step.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <span>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "models/pipeline.hpp"
#include "models/placement.hpp"
#include "topologies/collective.hpp"
#include "topologies/network.hpp"

namespace clustersim::models {

const char* name(TaskKind k) {
  switch (k) {
    case TaskKind::forward: return "forward";
    case TaskKind::backward: return "backward";
    case TaskKind::recompute: return "recompute";
    case TaskKind::optimizer: return "optimizer";
    case TaskKind::dp_grad_reduce: return "dp_grad_reduce";
    case TaskKind::dp_param_gather: return "dp_param_gather";
    case TaskKind::sync: return "sync";
    case TaskKind::tp_comm: return "tp_comm";
    case TaskKind::cp_comm: return "cp_comm";
    case TaskKind::pp_send: return "pp_send";
  }
  return "?";
}

namespace {

using sim::TaskId;
using sim::Time;
using topologies::Collective;

// Streams and resources of one stage; stage s uses s·kStreams + stream, s·kResources + resource.
enum Stream : std::int32_t { kCompute, kTpStream, kCpStream, kPpFwdStream, kPpBwdStream, kDpReduceStream,
                             kDpGatherStream, kStreams };
// DP collectives load the topology's link classes (kLinkBase + class), shared between concurrent
// collectives of the stage by the runner.
enum Resource : std::int32_t { kSm, kTpLink, kCpLink, kPpLink, kDpNet, kLinkBase,
                               kResources = kLinkBase + topologies::kLinkClasses };

// Adam with fp32 master weights, per local parameter: read grad, master, m, v (16 B), write
// master, m, v (12 B) and the bf16 weight (2 B), plus the gradient-norm read (4 B).
constexpr double kAdamBytesPerParam = 34.0;

/// One step of a block pass: a compute piece, or a TP / CP transfer between pieces.
struct Item {
  bool comm = false;
  double seconds = 0;
  Resource channel = kTpLink;
  /// Next compute waits for this comm; otherwise it overlaps the next compute and the compute
  /// after that waits.
  bool wait_now = true;
  /// Starts when the last compute ends; otherwise when the compute before it ends (overlapped
  /// with the producing GEMM, as TE's userbuffers do) — or, for a CP ring step, right after the
  /// previous transfer on its stream.
  int start_after = 1;  // 1: last compute, 2: the compute before it, 0: stream order only
  bool sealed = false;  ///< compute: later compute pieces must not merge into it
};

class ItemList {
 public:
  void compute(double s) {
    if (s <= 0) return;
    if (!items_.empty() && !items_.back().comm && !items_.back().sealed && !seal_next_) {
      items_.back().seconds += s;
      return;
    }
    Item it;
    it.seconds = s;
    it.sealed = seal_next_;
    seal_next_ = false;
    items_.push_back(it);
  }
  void comm(double s, Resource channel, bool wait_now, int start_after) {
    if (s <= 0) return;
    Item it;
    it.comm = true;
    it.seconds = s;
    it.channel = channel;
    it.wait_now = wait_now;
    it.start_after = start_after;
    if (!items_.empty() && !items_.back().comm) items_.back().sealed = true;
    if (!wait_now) seal_next_ = true;  // the overlapped compute must stay a task of its own
    items_.push_back(it);
  }
  /// The next compute starts a task of its own.
  void split() { seal_next_ = true; }
  const std::vector<Item>& items() const { return items_; }

 private:
  std::vector<Item> items_;
  bool seal_next_ = false;
};

struct Bucket {
  double params = 0;
  int ready_unit = 0;  // index in backward order of the unit whose gradient completes it
};

/// Where the time of a merged task went when its kernels and transfers ran alone: a whole pass
/// (or one block) simulated once at kernel granularity, then run as one task of `total_s`.
struct PassProfile {
  double total_s = 0;
  double forward_s = 0, backward_s = 0, recompute_s = 0;
  double tp_exposed_s = 0, cp_exposed_s = 0;  ///< transfer time with no kernel running
  double tp_busy_s = 0, cp_busy_s = 0;
  double slowdown_s = 0;  ///< kernel time lost to SMs taken by the overlapped transfers
};

/// Per-stage bookkeeping while tasks are added.
struct StageState {
  TaskId last_compute = -1, prev_compute = -1;
  std::vector<TaskId> wait_next, wait_later;
  // Gradient units in the order their backward completes: for chunks vpp−1..0, the head (if
  // the chunk has it), its blocks last to first, the embedding (if it has it).
  std::vector<double> unit_params;
  std::vector<int> chunk_unit_offset;
  std::vector<Bucket> buckets;
  std::vector<TaskId> gather_done;  // per bucket, ZeRO-1/2 parameter all-gather
  std::vector<int> bucket_of_unit;
  std::vector<std::size_t> chunk_bucket_begin, chunk_bucket_end;  // per chunk
  std::size_t next_bucket = 0;
  int bucket_round = -1;
  std::vector<std::size_t> held;
  std::vector<TaskId> reduce_done;
  TaskId block_end_prev = -1, block_end_cur = -1;  // ZeRO-3 prefetch window
  double params = 0;
};

class StepBuilder {
 public:
  StepBuilder(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
              const hardware::GpuSpec& gpu, const StepCosts& c, const topologies::Network& net,
              std::vector<TimelineEntry>* timeline)
      : m_(m), t_(t), p_(p), gpu_(gpu), c_(c), net_(net), timeline_(timeline), fine_(timeline != nullptr),
        place_(make_placement(p, gpu.node.gpus_per_node)),
        mbs_(t.micro_batches(p)), vlayers_(virtual_stage_layers(m.layers, p)),
        dp_ranks_(p.dp * p.cp), zero_(dp_ranks_ > 1 ? p.zero_stage : 0) {}

  StepResult run() {
    build_items();
    stages_.resize(static_cast<std::size_t>(p_.pp));
    for (int s = 0; s < p_.pp; ++s) plan_units(s);
    if (zero_ >= 1 && zero_ <= 2 && t_.overlap_param_gather)
      for (int s = 0; s < p_.pp; ++s) {
        // Parameters updated by the last step arrive bucket by bucket in forward order,
        // overlapping the first micro-batch's forward.
        auto& st = stage(s);
        for (std::size_t i = st.buckets.size(); i-- > 0;)
          st.gather_done[i] = add_dp(s, TaskKind::dp_param_gather, Collective::all_gather,
                                     st.buckets[i].params * weight_bytes(), {});
      }
    emit_schedule();
    label_mb_ = -1, label_layer_ = -3;
    if (m_.tied_embeddings && p_.pp > 1) sync_tied_embedding();
    for (int s = 0; s < p_.pp; ++s) finish_stage(s);
    return measure();
  }

 private:
  StageState& stage(int s) { return stages_[static_cast<std::size_t>(s)]; }
  int vstages() const { return p_.pp * p_.vpp; }
  double weight_bytes() const { return hardware::storage_bytes(t_.precision); }
  double grad_bytes() const { return t_.grad_reduce_fp32 ? 4.0 : 2.0; }

  double tp_time(Collective c, double bytes) const {
    return topologies::collective_cost(gpu_.node, c, bytes, place_.tp).time_s;
  }

  // The pieces of one block's forward and backward, with the TP collectives between them
  // (Megatron: g after the row-parallel attention output and MLP down projections, f before
  // the column-parallel QKV and MLP up; with SP all-gather before and reduce-scatter after)
  // and the CP ring steps around the attention core.
  void build_items() {
    const bool tp = p_.tp > 1, sp = tp && p_.sequence_parallel, ov = p_.tp_comm_overlap;
    const double act = c_.activation_bytes;
    const double ar = tp ? tp_time(Collective::all_reduce, act) : 0;
    const double ag = sp ? tp_time(Collective::all_gather, act) : 0;
    const double rs = sp ? tp_time(Collective::reduce_scatter, act) : 0;
    const double out_comm = sp ? rs : ar;  // after a row-parallel GEMM (fwd)
    auto part = [&](const std::array<PassCost, kBlockParts>& a, BlockPart x) {
      return a[static_cast<std::size_t>(x)].time_s;
    };
    const auto& F = c_.part_fwd;
    const auto& B = c_.part_bwd;
    auto ring = [&](ItemList& L, double first, double step, double kv_bytes) {
      if (p_.cp == 1) return L.compute(first);
      const double hop = topologies::p2p_cost(gpu_.node, kv_bytes, place_.cp.nodes() == 1).time_s;
      for (int i = 1; i < p_.cp; ++i) {
        L.comm(hop, kCpLink, false, i == 1 ? 1 : 0);
        L.compute(i == 1 ? first : step);
      }
      L.compute(step);
    };
    // Forward.
    ItemList f;
    f.compute(part(F, norm_attn));
    if (sp) f.comm(ag, kTpLink, !ov, 1);
    f.compute(part(F, qkv));
    ring(f, part(F, core), c_.ring_step_fwd.time_s, c_.kv_chunk_bytes);
    if (ov) f.split();  // the output collective overlaps the GEMM that produces it
    f.compute(part(F, attn_out));
    if (tp) f.comm(out_comm, kTpLink, true, ov ? 2 : 1);
    f.compute(part(F, norm_mlp));
    if (sp) f.comm(ag, kTpLink, !ov, 1);
    if (ov) f.split();
    f.compute(part(F, mlp));
    if (tp) f.comm(out_comm, kTpLink, true, ov ? 2 : 1);
    fwd_items_ = f.items();
    // Backward: the input-gradient collective of a column-parallel GEMM overlaps its wgrad.
    ItemList b;
    if (sp) b.comm(ag, kTpLink, !ov, 1);
    b.compute(part(B, mlp));
    if (tp) b.comm(out_comm, kTpLink, false, 1);
    b.compute(part(B, mlp_up_wgrad));
    b.compute(part(B, norm_mlp));
    if (sp) b.comm(ag, kTpLink, !ov, 1);
    b.compute(part(B, attn_out));
    ring(b, part(B, core), c_.ring_step_bwd.time_s, 2 * c_.kv_chunk_bytes);  // K/V and dK/dV
    b.compute(part(B, qkv));
    if (tp) b.comm(out_comm, kTpLink, false, 1);
    b.compute(part(B, qkv_wgrad));
    b.compute(part(B, norm_attn));
    bwd_items_ = b.items();
    // Embedding: vocab-parallel lookup, then all-reduce (reduce-scatter with SP) of the output.
    ItemList ef, eb, hf, hb;
    ef.compute(c_.embed_fwd.time_s);
    if (tp) ef.comm(out_comm, kTpLink, true, 1);
    if (sp) eb.comm(ag, kTpLink, true, 1);
    eb.compute(c_.embed_bwd.time_s);
    // Head: the column-parallel LM head needs the full sequence (all-gather with SP); its input
    // gradient is all-reduced (reduce-scattered with SP).
    if (sp) hf.comm(ag, kTpLink, true, 1);
    hf.compute(c_.head_fwd.time_s);
    hb.compute(c_.head_bwd.time_s);
    if (tp) hb.comm(out_comm, kTpLink, true, 1);
    embed_fwd_ = ef.items(), embed_bwd_ = eb.items(), head_fwd_ = hf.items(), head_bwd_ = hb.items();
  }

  void plan_units(int s) {
    auto& st = stage(s);
    const ParamCount pc = count_params(m_, t_.seq_len);
    const double h = m_.hidden, v = m_.padded_vocab(p_.tp);
    const double embedding = (v * h + (pc.embedding - double(m_.vocab) * h)) / p_.tp;
    // Tied embeddings with pp > 1: the last stage keeps its own copy as the LM head (Megatron).
    const double head = (m_.tied_embeddings && p_.pp == 1 ? 0.0 : v * h / p_.tp) + pc.final_norm;
    st.chunk_unit_offset.assign(static_cast<std::size_t>(p_.vpp), 0);
    for (int c = p_.vpp - 1; c >= 0; --c) {
      const int vs = c * p_.pp + s;
      st.chunk_unit_offset[static_cast<std::size_t>(c)] = int(st.unit_params.size());
      if (vs == vstages() - 1) st.unit_params.push_back(head);
      for (int l = 0; l < vlayers_[static_cast<std::size_t>(vs)]; ++l) st.unit_params.push_back(c_.layer_params);
      if (vs == 0) st.unit_params.push_back(embedding);
    }
    for (double u : st.unit_params) st.params += u;
    const double cap = zero_ == 3 ? 0.0
                       : t_.grad_bucket_params > 0 ? t_.grad_bucket_params
                                                   : std::max(4e7, 1e6 * p_.dp);  // Megatron DDP default
    // Every model chunk is its own DDP module with its own buckets (Megatron).
    st.chunk_bucket_begin.assign(static_cast<std::size_t>(p_.vpp), 0);
    st.chunk_bucket_end.assign(static_cast<std::size_t>(p_.vpp), 0);
    Bucket cur;
    for (int c = p_.vpp - 1; c >= 0; --c) {
      st.chunk_bucket_begin[static_cast<std::size_t>(c)] = st.buckets.size();
      const int end = c == 0 ? int(st.unit_params.size()) : st.chunk_unit_offset[static_cast<std::size_t>(c - 1)];
      for (int u = st.chunk_unit_offset[static_cast<std::size_t>(c)]; u < end; ++u) {
        cur.params += st.unit_params[static_cast<std::size_t>(u)];
        cur.ready_unit = u;
        if (cur.params >= cap || u + 1 == end) {
          st.buckets.push_back(cur);
          cur = Bucket{};
        }
      }
      st.chunk_bucket_end[static_cast<std::size_t>(c)] = st.buckets.size();
    }
    st.gather_done.assign(st.buckets.size(), -1);
    st.bucket_of_unit.assign(st.unit_params.size(), 0);
    for (std::size_t bi = 0, u = 0; u < st.unit_params.size(); ++u) {
      while (bi + 1 < st.buckets.size() && int(u) > st.buckets[bi].ready_unit) ++bi;
      st.bucket_of_unit[u] = int(bi);
    }
  }

  // Unit index (see StageState) of a chunk's head (-1), block l, or embedding (layers).
  int unit_of(int s, int chunk, int which) {
    const auto& st = stage(s);
    const int vs = chunk * p_.pp + s;
    int u = st.chunk_unit_offset[static_cast<std::size_t>(chunk)];
    const bool has_head = vs == vstages() - 1;
    const int layers = vlayers_[static_cast<std::size_t>(vs)];
    if (which < 0) return u;
    if (which >= layers) return u + (has_head ? 1 : 0) + layers;
    return u + (has_head ? 1 : 0) + (layers - 1 - which);
  }

  // What a pass (forward or backward, micro-batch, virtual stage) produced, once emitted.
  std::size_t output_index(bool forward, int mb, int vs) const {
    return (static_cast<std::size_t>(mb) * static_cast<std::size_t>(vstages()) + static_cast<std::size_t>(vs)) * 2 +
           (forward ? 1 : 0);
  }
  const std::vector<TaskId>* output(bool forward, int mb, int vs) const {
    const auto& o = outputs_[output_index(forward, mb, vs)];
    return o.first ? &o.second : nullptr;
  }

  // Emits every stage's passes in a global order that respects the cross-stage dependencies,
  // so that each task's dependencies exist when it is added.
  void emit_schedule() {
    outputs_.assign(static_cast<std::size_t>(mbs_) * static_cast<std::size_t>(vstages()) * 2, {});
    std::vector<std::vector<PipeOp>> order;
    for (int s = 0; s < p_.pp; ++s) order.push_back(stage_schedule(p_, s, mbs_));
    std::vector<std::size_t> next(static_cast<std::size_t>(p_.pp), 0);
    std::size_t remaining = 0;
    for (const auto& o : order) remaining += o.size();
    while (remaining > 0) {
      bool progressed = false;
      for (int s = 0; s < p_.pp; ++s) {
        auto& i = next[static_cast<std::size_t>(s)];
        const auto& ops = order[static_cast<std::size_t>(s)];
        while (i < ops.size()) {
          const PipeOp op = ops[i];
          const int vs = op.chunk * p_.pp + s;
          std::vector<TaskId> deps;
          if (op.forward && vs > 0) {
            const auto* out = output(true, op.micro_batch, vs - 1);
            if (!out) break;
            deps = *out;
          } else if (!op.forward) {
            const bool last = vs == vstages() - 1;
            const auto* out = output(last, op.micro_batch, last ? vs : vs + 1);
            if (!out) break;
            deps = *out;
          }
          outputs_[output_index(op.forward, op.micro_batch, vs)] = {true, emit_pass(s, op, std::move(deps))};
          ++i, --remaining, progressed = true;
        }
      }
      if (!progressed) throw std::logic_error("pipeline schedule deadlocks");
    }
  }

  // The units of virtual stage vs's forward or backward pass, in execution order:
  // f(which, items, kind, forward, block, layer label), `which` as unit_of() takes it.
  template <class F>
  void for_each_unit(int vs, bool forward, F&& f) {
    const int layers = vlayers_[static_cast<std::size_t>(vs)];
    const bool first = vs == 0, last = vs == vstages() - 1;
    if (forward) {
      if (first) f(layers, embed_fwd_, TaskKind::forward, true, false, -1);
      for (int l = 0; l < layers; ++l) f(l, fwd_items_, TaskKind::forward, true, false, first_layer(vs) + l);
      if (last) f(-1, head_fwd_, TaskKind::forward, true, false, -2);
    } else {
      if (last) f(-1, head_bwd_, TaskKind::backward, false, false, -2);
      for (int l = layers - 1; l >= 0; --l) f(l, bwd_items_, TaskKind::backward, false, true, first_layer(vs) + l);
      if (first) f(layers, embed_bwd_, TaskKind::backward, false, false, -1);
    }
  }

  // Whether a pass has ZeRO / DP traffic tied to its individual units (so it cannot run as one
  // merged task): ZeRO-3 gathers and scatters per unit; the first forward waits for overlapped
  // parameter gathers; backward passes whose gradients are reduced launch buckets per unit.
  bool unit_traffic(const PipeOp& op) const {
    if (zero_ == 3) {
      const bool gathers = !keeps_params() || (op.forward && op.micro_batch == 0);
      return gathers || (!op.forward && reduces_in(op));
    }
    if (op.forward) return op.micro_batch == 0 && zero_ >= 1 && t_.overlap_param_gather;
    return dp_ranks_ > 1 && reduces_in(op);
  }

  // Whether this backward pass reduces (or reduce-scatters) its gradients: ZeRO-0/1 and
  // pipelined ZeRO-2/3 in the last micro-batch only (see ParallelSpec).
  bool reduces_in(const PipeOp& op) const {
    return (zero_ >= 2 && p_.reduces_grads_every_micro_batch()) || op.micro_batch == mbs_ - 1;
  }
  // ZeRO-3 keeps each block's gathered parameters for the step (see FsdpReshard).
  bool keeps_params() const { return zero_ == 3 && p_.keeps_gathered_params(); }

  std::vector<TaskId> emit_pass(int s, const PipeOp& op, std::vector<TaskId> deps) {
    const int vs = op.chunk * p_.pp + s;
    label_mb_ = op.micro_batch;
    if (!fine_ && !unit_traffic(op)) {
      // Consecutive kernels and TP / CP transfers whose durations are already known run as one
      // task, which the other streams (DP, PP) still slow down through the shared SMs.
      const std::size_t prof = pass_profile(vs, op.forward);
      add_profiled(s, op.forward ? TaskKind::forward : TaskKind::backward, prof, &deps);
    } else {
      for_each_unit(vs, op.forward, [&](int which, const std::vector<Item>& items, TaskKind kind, bool forward,
                                        bool block, int label) {
        label_layer_ = label;
        emit_unit(s, op, unit_of(s, op.chunk, which), items, kind, &deps, forward, block);
      });
    }
    const bool ends_model = op.forward ? vs == vstages() - 1 : vs == 0;
    return ends_model ? flush(s) : send(s, op.forward);
  }

  // A unit's kernels and transfers (its recomputed forward first, for a block's backward).
  void emit_unit_body(int s, const std::vector<Item>& items, TaskKind kind, bool block, std::vector<TaskId>* deps) {
    if (block && t_.recompute == Recompute::full)
      emit_items(s, fwd_items_, TaskKind::recompute, deps);
    else if (block && t_.recompute == Recompute::selective)
      add_compute(s, TaskKind::recompute, c_.layer_recompute.time_s, deps);
    emit_items(s, items, kind, deps);
  }

  using ProfileKey = std::tuple<bool, bool, bool, int>;  // forward, has embedding, has head, layers (−1: one unit)

  PassProfile summarize(const sim::RunResult& run) const {
    PassProfile p;
    p.total_s = run.makespan.seconds();
    struct Edge {
      Time at;
      int delta, cat;  // 0 kernel, 1 TP, 2 CP
    };
    std::vector<Edge> edges;
    for (std::size_t i = 0; i < graph_.size(); ++i) {
      const auto& tm = run.timing[i];
      if (tm.end <= tm.start) continue;
      const double d = (tm.end - tm.start).seconds();
      const sim::TaskView task = graph_[TaskId(i)];
      int cat = 0;
      if (task.stream % kStreams == kCompute) p.slowdown_s += d - task.work.seconds();
      switch (static_cast<TaskKind>(task.tag)) {
        case TaskKind::forward: p.forward_s += d; break;
        case TaskKind::backward: p.backward_s += d; break;
        case TaskKind::recompute: p.recompute_s += d; break;
        case TaskKind::tp_comm: p.tp_busy_s += d, cat = 1; break;
        case TaskKind::cp_comm: p.cp_busy_s += d, cat = 2; break;
        default: break;
      }
      edges.push_back({tm.start, +1, cat});
      edges.push_back({tm.end, -1, cat});
    }
    std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.at < b.at; });
    int active[3] = {};
    Time prev{};
    for (const Edge& e : edges) {
      if (e.at > prev && active[0] == 0) {  // no kernel running: a transfer is exposed (TP first)
        double& exposed = active[2] > 0 && active[1] == 0 ? p.cp_exposed_s : p.tp_exposed_s;
        exposed += (e.at - prev).seconds();
      }
      prev = e.at;
      active[e.cat] += e.delta;
    }
    return p;
  }

  // One unit (block, embedding or head) of a forward or backward pass, simulated alone on an
  // empty graph at kernel granularity (on stage 0's streams); cached for the rest of the step.
  std::size_t unit_profile(const std::vector<Item>& items, TaskKind kind, bool forward, bool block) {
    const int which = &items == &fwd_items_ || &items == &bwd_items_ ? 0 : &items == &head_fwd_ || &items == &head_bwd_ ? 1 : 2;
    const ProfileKey key{forward, which == 2, which == 1, -1};
    if (auto it = profile_index_.find(key); it != profile_index_.end()) return it->second;
    sim::TaskGraph graph;
    std::vector<std::int32_t> task_profile;
    StageState state;
    std::swap(graph, graph_), std::swap(task_profile, task_profile_), std::swap(state, stages_.front());
    std::vector<TaskId> deps;
    emit_unit_body(0, items, kind, block, &deps);
    const PassProfile p = summarize(sim::run_task_graph(graph_));
    std::swap(graph, graph_), std::swap(task_profile, task_profile_), std::swap(state, stages_.front());
    profiles_.push_back(p);
    profile_index_.emplace(key, profiles_.size() - 1);
    return profiles_.size() - 1;
  }

  // A whole pass of virtual stage vs: its units run back to back (each starts when the one
  // before has finished its kernels and transfers), so its profile is the sum of theirs.
  std::size_t pass_profile(int vs, bool forward) {
    const ProfileKey key{forward, vs == 0, vs == vstages() - 1, vlayers_[static_cast<std::size_t>(vs)]};
    if (auto it = profile_index_.find(key); it != profile_index_.end()) return it->second;
    PassProfile sum;
    for_each_unit(vs, forward, [&](int, const std::vector<Item>& items, TaskKind kind, bool fwd, bool block, int) {
      const PassProfile& u = profiles_[unit_profile(items, kind, fwd, block)];
      sum.total_s += u.total_s, sum.forward_s += u.forward_s, sum.backward_s += u.backward_s;
      sum.recompute_s += u.recompute_s, sum.tp_exposed_s += u.tp_exposed_s, sum.cp_exposed_s += u.cp_exposed_s;
      sum.tp_busy_s += u.tp_busy_s, sum.cp_busy_s += u.cp_busy_s, sum.slowdown_s += u.slowdown_s;
    });
    profiles_.push_back(sum);
    profile_index_.emplace(key, profiles_.size() - 1);
    return profiles_.size() - 1;
  }

  // One merged task on the compute stream for a profiled pass or unit.
  void add_profiled(int s, TaskKind kind, std::size_t profile, std::vector<TaskId>* deps) {
    const double seconds = profiles_[profile].total_s;
    const TaskId id = add_compute(s, kind, seconds, deps);
    if (seconds <= 0) return;
    task_profile_.resize(static_cast<std::size_t>(id) + 1, -1);
    task_profile_[static_cast<std::size_t>(id)] = std::int32_t(profile);
  }

  // One gradient unit's pass, with the ZeRO traffic around it.
  void emit_unit(int s, const PipeOp& op, int unit, const std::vector<Item>& items, TaskKind kind,
                 std::vector<TaskId>* deps, bool forward, bool block = false) {
    auto& st = stage(s);
    const double params = st.unit_params[static_cast<std::size_t>(unit)];
    if (zero_ == 3 && (!keeps_params() || (forward && op.micro_batch == 0))) {
      // FSDP / ZeRO-3: gather this unit's parameters, issued when the unit before the previous
      // one has finished (one unit of prefetch).
      const double bytes = params * weight_bytes();
      deps->push_back(st.block_end_prev >= 0
                          ? add_dp(s, TaskKind::dp_param_gather, Collective::all_gather, bytes, {st.block_end_prev})
                          : add_dp(s, TaskKind::dp_param_gather, Collective::all_gather, bytes, {}));
    } else if (zero_ != 3 && forward && op.micro_batch == 0) {
      const TaskId g = st.gather_done[static_cast<std::size_t>(st.bucket_of_unit[static_cast<std::size_t>(unit)])];
      if (g >= 0) deps->push_back(g);
    }
    // A block's recomputed forward runs right before its backward, once its parameters are here.
    if (fine_) {
      emit_unit_body(s, items, kind, block, deps);
    } else {
      add_profiled(s, kind, unit_profile(items, kind, forward, block), deps);
    }
    const TaskId done = stage(s).last_compute;
    st.block_end_prev = st.block_end_cur;
    st.block_end_cur = done;
    if (forward || dp_ranks_ <= 1) return;
    if (!reduces_in(op)) return;
    if (zero_ == 3) {
      st.reduce_done.push_back(add_dp(s, TaskKind::dp_grad_reduce, Collective::reduce_scatter,
                                      params * grad_bytes(), {done}));
    } else {
      // Buckets are reduced (ZeRO-2: reduce-scattered) as they fill.
      launch_ready_buckets(s, op, unit, done);
    }
  }

  void launch_ready_buckets(int s, const PipeOp& op, int unit, TaskId grad_done) {
    auto& st = stage(s);
    const int round = op.micro_batch * p_.vpp + op.chunk;
    const auto c = static_cast<std::size_t>(op.chunk);
    if (st.bucket_round != round) {  // a new round of the chunk's buckets (ZeRO-2: every micro-batch)
      st.bucket_round = round;
      st.next_bucket = st.chunk_bucket_begin[c];
    }
    const bool last_unit = unit + 1 == int(st.unit_params.size());
    for (; st.next_bucket < st.chunk_bucket_end[c] && st.buckets[st.next_bucket].ready_unit <= unit;
         ++st.next_bucket) {
      if (!t_.overlap_grad_reduce && !last_unit && zero_ != 2) {
        st.held.push_back(st.next_bucket);
        continue;
      }
      for (auto b : st.held) st.reduce_done.push_back(reduce_bucket(s, b, grad_done));
      st.held.clear();
      st.reduce_done.push_back(reduce_bucket(s, st.next_bucket, grad_done));
    }
  }

  TaskId reduce_bucket(int s, std::size_t b, TaskId after) {
    const double bytes = stage(s).buckets[b].params * grad_bytes();
    return add_dp(s, TaskKind::dp_grad_reduce, zero_ >= 1 ? Collective::reduce_scatter : Collective::all_reduce,
                  bytes, {after});
  }

  // Tied embeddings with pp > 1: the first stage's word embedding and the last stage's LM head
  // are copies; their gradients are all-reduced between the two after the backward passes
  // (Megatron finalize_model_grads, _allreduce_embedding_grads).
  void sync_tied_embedding() {
    const int last = p_.pp - 1;
    const double bytes = double(m_.padded_vocab(p_.tp)) * m_.hidden / p_.tp * grad_bytes();
    const bool same_node = place_.stages_share_node(0, last);
    const auto cost = topologies::collective_cost(gpu_.node, Collective::all_reduce, bytes, {2, same_node ? 2 : 1});
    std::vector<TaskId> deps = flush(0);
    for (TaskId d : flush(last)) deps.push_back(d);
    const TaskId id = add_task(0, kDpReduceStream, TaskKind::dp_grad_reduce, cost.time_s, std::move(deps),
                               {{kDpNet, 1.0}, {last * kResources + kDpNet, 1.0}}, 1);
    stage(0).reduce_done.push_back(id);
    stage(last).reduce_done.push_back(id);
  }

  void finish_stage(int s) {
    auto& st = stage(s);
    const double local_params = st.params / (zero_ >= 1 ? dp_ranks_ : 1);
    const double opt_s = hardware::memory_cost(gpu_, local_params * kAdamBytesPerParam).time_s + c_.step_fixed.time_s;
    std::vector<TaskId> deps = st.reduce_done;
    for (TaskId w : st.wait_next) deps.push_back(w);
    for (TaskId w : st.wait_later) deps.push_back(w);
    st.wait_next.clear(), st.wait_later.clear();
    const TaskId opt = add_compute(s, TaskKind::optimizer, opt_s, &deps);
    if ((zero_ == 1 || zero_ == 2) && !t_.overlap_param_gather) {
      std::vector<TaskId> gathers;
      for (std::size_t i = st.buckets.size(); i-- > 0;)
        gathers.push_back(add_dp(s, TaskKind::dp_param_gather, Collective::all_gather,
                                 st.buckets[i].params * weight_bytes(), {opt}));
      add_compute(s, TaskKind::sync, 0.0, &gathers, true);
    }
  }

  // Adds `items` on stage s; the first compute also waits for `deps` (consumed). Returns the
  // last compute task.
  TaskId emit_items(int s, const std::vector<Item>& items, TaskKind kind, std::vector<TaskId>* deps) {
    auto& st = stage(s);
    for (const Item& it : items) {
      if (!it.comm) {
        add_compute(s, kind, it.seconds, deps);
        continue;
      }
      std::vector<TaskId> after = std::move(*deps);
      deps->clear();
      const TaskId from = it.start_after == 1 ? st.last_compute : it.start_after == 2 ? st.prev_compute : -1;
      if (from >= 0) after.push_back(from);
      const TaskKind ck = it.channel == kCpLink ? TaskKind::cp_comm : TaskKind::tp_comm;
      const TaskId id = add_task(s, it.channel == kCpLink ? kCpStream : kTpStream, ck, it.seconds, std::move(after),
                                 {{s * kResources + kSm, double(gpu_.comm_sms) / gpu_.sms},
                                  {s * kResources + it.channel, 1.0}}, 1);
      (it.wait_now ? st.wait_next : st.wait_later).push_back(id);
    }
    return st.last_compute;
  }

  // Everything the stage's latest pass produced: its last compute and any collective after it.
  std::vector<TaskId> flush(int s) {
    auto& st = stage(s);
    std::vector<TaskId> out = st.wait_next;
    out.insert(out.end(), st.wait_later.begin(), st.wait_later.end());
    if (st.last_compute >= 0) out.push_back(st.last_compute);
    st.wait_next.clear(), st.wait_later.clear();
    return out;
  }

  // Activation (forward) or its gradient (backward) to the next virtual stage. Megatron sends
  // 1/tp of the [b, s/cp, h] tensor per TP rank (scatter-gather optimization, Narayanan et al.
  // 2021 §4.1; with SP the tensor is already sequence-sharded).
  std::vector<TaskId> send(int s, bool forward) {
    const int to = forward ? (s + 1) % p_.pp : (s + p_.pp - 1) % p_.pp;
    const bool same_node = place_.stages_share_node(s, to);
    const double bytes = c_.activation_bytes / p_.tp;
    const double secs = topologies::p2p_cost(gpu_.node, bytes, same_node).time_s;
    const TaskId id = add_task(s, forward ? kPpFwdStream : kPpBwdStream, TaskKind::pp_send, secs, flush(s),
                               {{s * kResources + kPpLink, 1.0}}, 1);
    send_receiver_.resize(graph_.size(), -1);
    send_receiver_[static_cast<std::size_t>(id)] = to;
    if (!p_.pp_comm_overlap) stage(s).wait_next.push_back(id);
    return {id};
  }

  TaskId add_dp(int s, TaskKind kind, Collective c, double bytes, std::initializer_list<TaskId> after) {
    const std::span<const TaskId> deps(after.begin(), after.size());
    const Stream stream = kind == TaskKind::dp_param_gather ? kDpGatherStream : kDpReduceStream;
    // NCCL kernels occupy comm_sms SMs while they run (hardware.md §3.9), slowing compute.
    const sim::ResourceUse sms{s * kResources + kSm, double(gpu_.comm_sms) / gpu_.sms};
    if (t_.free_comm.dp) return add_task(s, stream, kind, 0.0, deps, {sms}, 1);
    // All DP groups run this collective at once; its phases load the topology's link classes,
    // so concurrent DP collectives of the stage share them (issue #4).
    auto [at, fresh] = dp_costs_.try_emplace({int(c), bytes});
    if (fresh) at->second = net_.cost(c, topologies::GroupDim::dp, bytes);  // units repeat sizes
    const auto& cost = at->second;
    const std::size_t before = graph_.size();
    const sim::ResourceUse extra[] = {sms};
    const TaskId last = topologies::append_collective(graph_, cost, s * kStreams + stream, deps,
                                                      s * kResources + kLinkBase, extra, 1,
                                                      static_cast<std::int32_t>(kind));
    if (timeline_)
      for (std::size_t i = before; i < graph_.size(); ++i)
        labels_.push_back({s, stream_names()[static_cast<std::size_t>(stream)], kind, label_mb_, label_layer_});
    return last;
  }

  TaskId add_compute(int s, TaskKind kind, double seconds, std::vector<TaskId>* deps, bool always = false) {
    auto& st = stage(s);
    if (seconds <= 0 && !always && deps->empty() && st.wait_next.empty()) return st.last_compute;
    std::vector<TaskId>& d = deps_scratch_;  // reused: one task is added at a time
    d.assign(deps->begin(), deps->end());
    deps->clear();
    d.insert(d.end(), st.wait_next.begin(), st.wait_next.end());
    st.wait_next.swap(st.wait_later);
    st.wait_later.clear();
    const TaskId id = add_task(s, kCompute, kind, seconds, d, {{s * kResources + kSm, 1.0}}, 0);
    st.prev_compute = st.last_compute;
    st.last_compute = id;
    return id;
  }

  TaskId add_task(int s, Stream stream, TaskKind kind, double seconds, std::span<const TaskId> deps,
                  std::initializer_list<sim::ResourceUse> uses, std::int32_t priority) {
    const auto& free = t_.free_comm;
    if ((kind == TaskKind::tp_comm && free.tp) || (kind == TaskKind::cp_comm && free.cp) ||
        (kind == TaskKind::pp_send && free.pp) ||
        ((kind == TaskKind::dp_grad_reduce || kind == TaskKind::dp_param_gather) && free.dp))
      seconds = 0;
    if (timeline_) labels_.push_back({s, stream_names()[static_cast<std::size_t>(stream)], kind, label_mb_, label_layer_});
    return graph_.add(s * kStreams + stream, Time::from_seconds(seconds), deps,
                      std::span<const sim::ResourceUse>(uses.begin(), uses.size()), priority,
                      static_cast<std::int32_t>(kind));
  }

  StepResult measure();

  int first_layer(int vs) const {
    int first = 0;
    for (int v = 0; v < vs; ++v) first += vlayers_[static_cast<std::size_t>(v)];
    return first;
  }
  static const std::array<const char*, kStreams>& stream_names() {
    static const std::array<const char*, kStreams> names = {"compute", "tp_comm", "cp_comm", "pp_send_fwd",
                                                            "pp_send_bwd", "dp_reduce", "dp_gather"};
    return names;
  }

  const ModelSpec& m_;
  const TrainingSpec& t_;
  const ParallelSpec& p_;
  const hardware::GpuSpec& gpu_;
  const StepCosts& c_;
  const topologies::Network& net_;
  std::vector<TimelineEntry>* timeline_;
  const bool fine_;  ///< one task per kernel group and transfer (timelines); else merged passes
  std::vector<TimelineEntry> labels_;  // one per task, only when a timeline is wanted
  int label_mb_ = -1, label_layer_ = -3;  // what the tasks being added belong to
  const Placement place_;
  const int mbs_;
  const std::vector<int> vlayers_;
  const int dp_ranks_;
  const int zero_;
  std::vector<Item> fwd_items_, bwd_items_, embed_fwd_, embed_bwd_, head_fwd_, head_bwd_;
  std::vector<StageState> stages_;
  std::vector<std::pair<bool, std::vector<TaskId>>> outputs_;  // by output_index(): emitted?, its tasks
  std::vector<int> send_receiver_;  ///< per task: the stage a pipeline send goes to (−1: not a send)
  sim::TaskGraph graph_;
  std::map<std::pair<int, double>, topologies::CollectiveTime> dp_costs_;
  std::vector<TaskId> deps_scratch_;
  std::vector<std::int32_t> task_profile_;  ///< per task id: index in profiles_, or −1 (shorter: −1)
  std::vector<PassProfile> profiles_;
  std::map<ProfileKey, std::size_t> profile_index_;
};

// Attribution of one stage's timeline; see StepBreakdown.
enum Category { kCatCompute, kCatTp, kCatCp, kCatPp, kCatDpGather, kCatDpReduce, kCategories };

StepResult StepBuilder::measure() {
  const sim::RunResult run = sim::run_task_graph(graph_);
  if (timeline_) {
    for (std::size_t i = 0; i < graph_.size(); ++i) {
      const auto& tm = run.timing[i];
      if (tm.end <= tm.start) continue;
      TimelineEntry e = labels_[i];
      e.start_s = tm.start.seconds();
      e.end_s = tm.end.seconds();
      timeline_->push_back(e);
    }
  }
  StepResult r;
  r.micro_batches = mbs_;
  r.grad_buckets = int(stages_.front().buckets.size());
  r.tasks = graph_.size();
  r.events = run.events;
  r.step_time_s = run.makespan.seconds();
  struct Edge {
    Time at;
    int delta;
    Category cat;
  };
  const auto P = static_cast<std::size_t>(p_.pp);
  std::vector<std::vector<Edge>> edges(P);
  std::vector<StepBreakdown> bd(P);
  std::vector<double> busy(P, 0.0), slowdown(P, 0.0), dp_busy(P, 0.0), tp_busy(P, 0.0), cp_busy(P, 0.0);
  std::vector<Time> last_pass_end(P);
  for (std::size_t i = 0; i < graph_.size(); ++i) {
    const sim::TaskView task = graph_[TaskId(i)];
    const auto& tm = run.timing[i];
    if (tm.end <= tm.start) continue;
    auto s = static_cast<std::size_t>(task.stream / kStreams);
    const double dur = (tm.end - tm.start).seconds();
    const auto kind = static_cast<TaskKind>(task.tag);
    Category cat = kCatCompute;
    if (const std::int32_t k = i < task_profile_.size() ? task_profile_[i] : -1; k >= 0) {
      // A merged pass: when other streams' SMs slowed it down, the stretch belongs to its kernels
      // (transfers are not slowed by SM sharing); its transfers keep their isolated times.
      const PassProfile& prof = profiles_[static_cast<std::size_t>(k)];
      const double kernels = prof.forward_s + prof.backward_s + prof.recompute_s;
      const double stretch = kernels > 0 ? (kernels + dur - prof.total_s) / kernels : 1.0;
      auto& b = bd[s];
      b.forward_s += prof.forward_s * stretch, b.backward_s += prof.backward_s * stretch;
      b.recompute_s += prof.recompute_s * stretch;
      b.tp_comm_exposed_s += prof.tp_exposed_s, b.cp_comm_exposed_s += prof.cp_exposed_s;
      tp_busy[s] += prof.tp_busy_s, cp_busy[s] += prof.cp_busy_s;
      slowdown[s] += prof.slowdown_s;
    } else switch (kind) {
      case TaskKind::forward: bd[s].forward_s += dur; break;
      case TaskKind::backward: bd[s].backward_s += dur; break;
      case TaskKind::recompute: bd[s].recompute_s += dur; break;
      case TaskKind::optimizer: bd[s].optimizer_s += dur; break;
      case TaskKind::tp_comm: cat = kCatTp; tp_busy[s] += dur; break;
      case TaskKind::cp_comm: cat = kCatCp; cp_busy[s] += dur; break;
      case TaskKind::pp_send: {  // holds up the receiver, and the sender unless overlapped
        cat = kCatPp;
        const auto to = static_cast<std::size_t>(send_receiver_[i]);
        if (!p_.pp_comm_overlap) edges[s].push_back({tm.start, +1, cat}), edges[s].push_back({tm.end, -1, cat});
        s = to;
        break;
      }
      case TaskKind::dp_param_gather: cat = kCatDpGather; dp_busy[s] += dur; break;
      case TaskKind::dp_grad_reduce: cat = kCatDpReduce; dp_busy[s] += dur; break;
      case TaskKind::sync: break;
    }
    if (cat == kCatCompute) {
      busy[s] += dur;
      slowdown[s] += dur - task.work.seconds();
      if (kind == TaskKind::forward || kind == TaskKind::backward || kind == TaskKind::recompute)
        last_pass_end[s] = std::max(last_pass_end[s], tm.end);
    }
    edges[s].push_back({tm.start, +1, cat});
    edges[s].push_back({tm.end, -1, cat});
  }
  for (std::size_t s = 0; s < P; ++s) {
    auto& ev = edges[s];
    std::sort(ev.begin(), ev.end(), [](const Edge& a, const Edge& b) { return a.at < b.at; });
    int active[kCategories] = {};
    Time prev{};
    auto& b = bd[s];
    auto account = [&](Time from, Time to) {
      if (to <= from || active[kCatCompute] > 0) return;
      const double d = (to - from).seconds();
      const bool tail = from >= last_pass_end[s];
      if (active[kCatTp] > 0) b.tp_comm_exposed_s += d;
      else if (active[kCatCp] > 0) b.cp_comm_exposed_s += d;
      else if (active[kCatPp] > 0) b.pp_comm_exposed_s += d;
      else if (active[kCatDpGather] > 0 || (tail && active[kCatDpReduce] > 0)) b.dp_comm_exposed_s += d;
      else if (p_.pp > 1) b.bubble_s += d;
      else b.idle_s += d;
    };
    for (const Edge& e : ev) {
      account(prev, e.at);
      prev = e.at;
      active[e.cat] += e.delta;
    }
    account(prev, run.makespan);
  }
  std::size_t pick = 0;
  for (std::size_t s = 1; s < P; ++s)
    if (busy[s] > busy[pick]) pick = s;
  r.stage = int(pick);
  r.breakdown = bd[pick];
  r.stages = bd;
  r.compute_slowdown_s = slowdown[pick];
  r.dp_comm_busy_s = dp_busy[pick];
  r.tp_comm_busy_s = tp_busy[pick];
  r.cp_comm_busy_s = cp_busy[pick];
  return r;
}

}  // namespace

StepResult simulate_step(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                         const hardware::GpuSpec& gpu, const StepCosts& costs,
                         const topologies::Network* network, std::vector<TimelineEntry>* timeline) {
  if (network) return StepBuilder(m, t, p, gpu, costs, *network, timeline).run();
  const auto topo = topologies::topology_from_node(gpu.node);
  const topologies::Network own(topo, topologies::Network::nodes_for(topo, p.tp * p.cp * p.pp * p.dp),
                                {p.tp, p.cp, p.pp, p.dp});
  return StepBuilder(m, t, p, gpu, costs, own, timeline).run();
}

}  // namespace clustersim::models
