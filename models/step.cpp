#include "models/step.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

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
  }
  return "?";
}

namespace {

using sim::Task;
using sim::TaskId;
using sim::Time;
using topologies::Collective;

constexpr std::int32_t kComputeStream = 0;
constexpr std::int32_t kDpStream = 1;
constexpr std::int32_t kSmResource = 0;
constexpr std::int32_t kLinkResourceBase = 1;  // + link class (topologies/topology.hpp)

// Adam with fp32 master weights, per local parameter: read grad, master, m, v (16 B), write
// master, m, v (12 B) and the bf16 weight (2 B), plus the gradient-norm read (4 B).
constexpr double kAdamBytesPerParam = 34.0;

struct Bucket {
  double params = 0;
  int ready_unit = 0;  // index in backward order of the unit whose gradient completes it
};

class StepBuilder {
 public:
  StepBuilder(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
              const hardware::GpuSpec& gpu, const StepCosts& c, const topologies::Network& net)
      : m_(m), t_(t), p_(p), gpu_(gpu), c_(c), net_(net) {}

  StepResult run() {
    const int mbs = t_.micro_batches(p_);
    const int L = m_.layers;
    plan_buckets();
    std::vector<TaskId> gather_done(buckets_.size(), -1);
    const bool sharded = p_.zero_stage >= 1 && p_.dp > 1;
    if (sharded && t_.overlap_param_gather) {
      // Parameters updated by the last step arrive bucket by bucket, in forward order
      // (reverse backward order), overlapping the first micro-batch's forward.
      for (std::size_t i = buckets_.size(); i-- > 0;)
        gather_done[i] = add_comm(TaskKind::dp_param_gather, Collective::all_gather,
                                  buckets_[i].params * hardware::storage_bytes(t_.precision), {});
    }
    // bucket_of_unit[u]: units in backward order are 0 = head, 1..L = layers L-1..0, L+1 = embedding.
    std::vector<int> bucket_of_unit(static_cast<std::size_t>(L + 2), 0);
    for (std::size_t bi = 0, u = 0; u < bucket_of_unit.size(); ++u) {
      while (bi + 1 < buckets_.size() && int(u) > buckets_[bi].ready_unit) ++bi;
      bucket_of_unit[u] = int(bi);
    }
    auto wait_params = [&](int mb, int unit) -> std::vector<TaskId> {
      if (mb != 0) return {};
      TaskId g = gather_done[static_cast<std::size_t>(bucket_of_unit[static_cast<std::size_t>(unit)])];
      return g >= 0 ? std::vector<TaskId>{g} : std::vector<TaskId>{};
    };
    std::vector<TaskId> reduce_done;
    for (int mb = 0; mb < mbs; ++mb) {
      const bool last = mb == mbs - 1;
      add_compute(TaskKind::forward, c_.embed_fwd.time_s, wait_params(mb, L + 1));
      for (int l = 0; l < L; ++l)
        add_compute(TaskKind::forward, c_.layer_fwd.time_s, wait_params(mb, L - l));
      add_compute(TaskKind::forward, c_.head_fwd.time_s, wait_params(mb, 0));
      TaskId done = add_compute(TaskKind::backward, c_.head_bwd.time_s, {});
      if (last) launch_ready_buckets(0, done, &reduce_done);
      for (int l = L - 1; l >= 0; --l) {
        if (c_.layer_recompute.time_s > 0)
          add_compute(TaskKind::recompute, c_.layer_recompute.time_s, {});
        done = add_compute(TaskKind::backward, c_.layer_bwd.time_s, {});
        if (last) launch_ready_buckets(L - l, done, &reduce_done);
      }
      done = add_compute(TaskKind::backward, c_.embed_bwd.time_s, {});
      if (last) launch_ready_buckets(L + 1, done, &reduce_done);
    }
    const double local_params = total_params_ / (sharded ? p_.dp : 1);
    const double opt_s = hardware::memory_cost(gpu_, local_params * kAdamBytesPerParam).time_s;
    TaskId opt = add_compute(TaskKind::optimizer, opt_s, reduce_done);
    if (sharded && !t_.overlap_param_gather) {
      std::vector<TaskId> gathers;
      for (std::size_t i = buckets_.size(); i-- > 0;)
        gathers.push_back(add_comm(TaskKind::dp_param_gather, Collective::all_gather,
                                   buckets_[i].params * hardware::storage_bytes(t_.precision), {opt}));
      add_compute(TaskKind::sync, 0.0, gathers);
    }
    return measure(mbs);
  }

 private:
  void plan_buckets() {
    // Gradient units in backward order: head (+ final norm), blocks L-1..0, embedding.
    const ParamCount pc = count_params(m_, t_.seq_len);
    std::vector<double> units;
    units.push_back((pc.lm_head + pc.final_norm) / p_.tp);
    for (int l = 0; l < m_.layers; ++l) units.push_back(c_.layer_params);
    units.push_back(pc.embedding / p_.tp);
    total_params_ = 0;
    for (double u : units) total_params_ += u;
    const double cap = t_.grad_bucket_params > 0 ? t_.grad_bucket_params
                                                 : std::max(4e7, 1e6 * p_.dp);  // Megatron DDP default
    Bucket cur;
    for (std::size_t u = 0; u < units.size(); ++u) {
      cur.params += units[u];
      cur.ready_unit = int(u);
      if (cur.params >= cap || u + 1 == units.size()) {
        buckets_.push_back(cur);
        cur = Bucket{};
      }
    }
  }

  void launch_ready_buckets(int unit, TaskId grad_done, std::vector<TaskId>* out) {
    if (p_.dp <= 1) return;
    for (; next_bucket_ < buckets_.size() && buckets_[next_bucket_].ready_unit <= unit; ++next_bucket_) {
      const bool all_done = unit == m_.layers + 1;
      if (!t_.overlap_grad_reduce && !all_done) {
        pending_.push_back(next_bucket_);
        continue;
      }
      for (auto b : pending_) out->push_back(reduce_bucket(b, grad_done));
      pending_.clear();
      out->push_back(reduce_bucket(next_bucket_, grad_done));
    }
  }

  TaskId reduce_bucket(std::size_t b, TaskId after) {
    const double bytes = buckets_[b].params * (t_.grad_reduce_fp32 ? 4.0 : 2.0);
    const bool sharded = p_.zero_stage >= 1;
    return add_comm(TaskKind::dp_grad_reduce,
                    sharded ? Collective::reduce_scatter : Collective::all_reduce, bytes, {after});
  }

  TaskId add_compute(TaskKind kind, double seconds, std::vector<TaskId> deps) {
    Task t;
    t.stream = kComputeStream;
    t.work = Time::from_seconds(seconds);
    t.deps = std::move(deps);
    t.uses = {{kSmResource, 1.0}};
    t.tag = static_cast<std::int32_t>(kind);
    return graph_.add(std::move(t));
  }

  TaskId add_comm(TaskKind kind, Collective c, double bytes, std::vector<TaskId> deps) {
    // All DP groups run this collective at once; their flows load the topology's links, and
    // the task's demand on each link class lets concurrent transfers share it.
    const auto cost = net_.cost(c, topologies::GroupDim::dp, bytes);
    // NCCL kernels occupy comm_sms SMs while they run (hardware.md §3.9), slowing compute.
    return topologies::append_collective(graph_, cost, kDpStream, std::move(deps), kLinkResourceBase,
                                         {{kSmResource, double(gpu_.comm_sms) / gpu_.sms}}, 1,
                                         static_cast<std::int32_t>(kind));
  }

  StepResult measure(int mbs) {
    const sim::RunResult run = sim::run_task_graph(graph_);
    StepResult r;
    r.micro_batches = mbs;
    r.grad_buckets = int(buckets_.size());
    r.tasks = graph_.size();
    r.events = run.events;
    r.step_time_s = run.makespan.seconds();
    std::vector<std::pair<Time, Time>> compute, comm;
    for (std::size_t i = 0; i < graph_.size(); ++i) {
      const auto& task = graph_.tasks()[i];
      const auto& tm = run.timing[i];
      const double dur = (tm.end - tm.start).seconds();
      if (task.stream == kComputeStream) {
        compute.emplace_back(tm.start, tm.end);
        r.compute_slowdown_s += dur - task.work.seconds();
        switch (static_cast<TaskKind>(task.tag)) {
          case TaskKind::forward: r.breakdown.forward_s += dur; break;
          case TaskKind::backward: r.breakdown.backward_s += dur; break;
          case TaskKind::recompute: r.breakdown.recompute_s += dur; break;
          case TaskKind::optimizer: r.breakdown.optimizer_s += dur; break;
          default: break;
        }
      } else {
        comm.emplace_back(tm.start, tm.end);
        r.dp_comm_busy_s += dur;
      }
    }
    // Exposed communication: time covered by a collective while the compute stream is idle.
    // Compute intervals are disjoint (one FIFO stream); comm intervals are too (one stream).
    double exposed = 0;
    std::size_t k = 0;
    for (const auto& [cs, ce] : comm) {
      Time covered{};
      while (k < compute.size() && compute[k].second <= cs) ++k;
      for (std::size_t j = k; j < compute.size() && compute[j].first < ce; ++j) {
        const Time a = std::max(cs, compute[j].first), b = std::min(ce, compute[j].second);
        if (a < b) covered += b - a;
      }
      exposed += (ce - cs - covered).seconds();
    }
    auto& b = r.breakdown;
    b.dp_comm_exposed_s = exposed;
    b.idle_s = std::max(0.0, r.step_time_s - b.forward_s - b.backward_s - b.recompute_s -
                                 b.optimizer_s - b.dp_comm_exposed_s);
    return r;
  }

  const ModelSpec& m_;
  const TrainingSpec& t_;
  const ParallelSpec& p_;
  const hardware::GpuSpec& gpu_;
  const StepCosts& c_;
  const topologies::Network& net_;
  sim::TaskGraph graph_;
  std::vector<Bucket> buckets_;
  std::size_t next_bucket_ = 0;
  std::vector<std::size_t> pending_;
  double total_params_ = 0;
};

}  // namespace

StepResult simulate_step(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                         const hardware::GpuSpec& gpu, const StepCosts& costs,
                         const topologies::Network* network) {
  if (network) return StepBuilder(m, t, p, gpu, costs, *network).run();
  const auto topo = topologies::topology_from_node(gpu.node);
  const topologies::Network own(topo, topologies::Network::nodes_for(topo, p.tp * p.cp * p.pp * p.dp),
                                {p.tp, p.cp, p.pp, p.dp});
  return StepBuilder(m, t, p, gpu, costs, own).run();
}

}  // namespace clustersim::models
