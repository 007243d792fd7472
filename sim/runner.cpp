#include "sim/runner.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace clustersim::sim {
namespace {

constexpr double kEps = 1e-12;
constexpr double kUnlimited = std::numeric_limits<double>::infinity();

class Runner {
 public:
  // One Runner per thread runs every graph of that thread: its buffers keep their capacity
  // between simulations (a sweep runs thousands), so a run allocates little beyond its result.
  void load(const TaskGraph& g) {
    n_ = g.size();
    engine_.reset();
    result_ = RunResult{};
    result_.timing.resize(n_);
    finished_ = 0;
    hot_.resize(n_);
    pending_.assign(n_, 0);
    remaining_ps_.resize(n_);
    rate_.assign(n_, 0.0);
    ref_.resize(n_);
    gen_.assign(n_, 0);
    next_in_stream_.assign(n_, -1);
    std::vector<TaskId>& last_in_stream = last_in_stream_;
    last_in_stream.assign(static_cast<std::size_t>(g.num_streams()), -1);
    std::vector<std::int32_t>& out_count = dependents_start_;
    out_count.assign(n_ + 1, 0);
    for (std::size_t i = 0; i < n_; ++i) {
      const TaskView t = g[static_cast<TaskId>(i)];
      hot_[i] = {t.uses.data(), static_cast<std::uint32_t>(t.uses.size()), t.priority, t.work.ps()};
      remaining_ps_[i] = static_cast<double>(t.work.ps());
      pending_[i] = static_cast<std::int32_t>(t.deps.size());
      for (TaskId d : t.deps) {
        if (d < 0 || static_cast<std::size_t>(d) >= n_)
          throw std::logic_error("task depends on an unknown task");
        ++out_count[static_cast<std::size_t>(d) + 1];
      }
      auto& last = last_in_stream[static_cast<std::size_t>(t.stream)];
      if (last >= 0) {
        next_in_stream_[static_cast<std::size_t>(last)] = static_cast<TaskId>(i);
        ++pending_[i];
      }
      last = static_cast<TaskId>(i);
    }
    for (std::size_t i = 0; i < n_; ++i) out_count[i + 1] += out_count[i];
    dependents_.resize(static_cast<std::size_t>(out_count[n_]));
    std::vector<std::int32_t>& fill = fill_;
    fill.assign(out_count.begin(), out_count.end() - 1);
    for (std::size_t i = 0; i < n_; ++i)
      for (TaskId d : g[static_cast<TaskId>(i)].deps)
        dependents_[static_cast<std::size_t>(fill[static_cast<std::size_t>(d)]++)] =
            static_cast<TaskId>(i);
    const auto resources = static_cast<std::size_t>(g.num_resources());
    capacity_.assign(resources, 1.0);
    load_.assign(resources, 0.0);
    share_.assign(resources, 0.0);
    users_.resize(resources);
    for (auto& u : users_) u.clear();
    dirty_.clear();
    dirty_mark_.assign(resources, 0);
    in_comp_.assign(n_, 0);
    unconstrained_.clear();
    comp_.clear();
    res_.clear();
  }

  RunResult run() {
    for (std::size_t i = 0; i < n_; ++i)
      if (pending_[i] == 0) start(static_cast<TaskId>(i));
    reshare();
    engine_.run();
    if (finished_ != n_) throw std::logic_error("task graph has a dependency cycle");
    result_.events = engine_.events_processed();
    return std::move(result_);
  }

 private:
  void start(TaskId id) {
    auto i = static_cast<std::size_t>(id);
    result_.timing[i].start = engine_.now();
    ref_[i] = engine_.now();
    if (hot_[i].work_ps == 0) {  // zero-work tasks complete at once, outside the sharing
      schedule_finish(engine_.now(), id, gen_[static_cast<std::size_t>(id)]);
      return;
    }
    rate_[i] = 0.0;  // forces reshare() to give it a rate and a finish event
    if (hot_[i].n_uses == 0) unconstrained_.push_back(id);
    for (const auto& u : uses_of(id)) {
      users_[static_cast<std::size_t>(u.resource)].push_back(id);
      mark_dirty(u.resource);
    }
  }

  void mark_dirty(std::int32_t r) {
    auto k = static_cast<std::size_t>(r);
    if (!dirty_mark_[k]) dirty_mark_[k] = 1, dirty_.push_back(r);
  }

  void finish(TaskId id, std::uint32_t gen) {
    auto i = static_cast<std::size_t>(id);
    if (gen != gen_[i]) return;  // a stale prediction: the rate changed since
    ++gen_[i];
    result_.timing[i].end = engine_.now();
    result_.makespan = std::max(result_.makespan, engine_.now());
    ++finished_;
    for (const auto& u : uses_of(id)) {
      auto& list = users_[static_cast<std::size_t>(u.resource)];
      auto at = std::find(list.begin(), list.end(), id);
      if (at != list.end()) list.erase(at);
      mark_dirty(u.resource);
    }
    auto release = [this](TaskId next) {
      if (--pending_[static_cast<std::size_t>(next)] == 0) start(next);
    };
    for (auto k = dependents_start_[i]; k < dependents_start_[i + 1]; ++k)
      release(dependents_[static_cast<std::size_t>(k)]);
    if (next_in_stream_[i] >= 0) release(next_in_stream_[i]);
    reshare();
  }

  // Max-min fair rates by priority class (progressive filling), then re-predict finishes
  // for every task whose rate changed. Only the tasks connected (through shared resources) to
  // a resource whose set of users changed are re-solved: other components keep their rates.
  void reshare() {
    // Scratch vectors are members: this runs once per event, and allocating here dominated.
    std::vector<TaskId>& comp = comp_;
    comp.swap(unconstrained_);
    unconstrained_.clear();
    for (std::size_t q = 0; q < dirty_.size(); ++q) {  // grows while it runs: the component's resources
      const auto r = static_cast<std::size_t>(dirty_[q]);
      for (TaskId id : users_[r]) {
        if (in_comp_[static_cast<std::size_t>(id)]) continue;
        in_comp_[static_cast<std::size_t>(id)] = 1;
        comp.push_back(id);
        for (const auto& u : uses_of(id)) mark_dirty(u.resource);
      }
    }
    std::vector<std::int32_t>& res = res_;  // the resources visited, solved below
    res.swap(dirty_);
    dirty_.clear();
    for (auto r : res) dirty_mark_[static_cast<std::size_t>(r)] = 0, capacity_[static_cast<std::size_t>(r)] = 1.0;
    for (TaskId id : comp) in_comp_[static_cast<std::size_t>(id)] = 0;
    if (comp.size() == 1) {  // alone on its resources: full rate (or what its largest demand allows)
      double rate = 1.0;
      for (const auto& u : uses_of(comp[0])) rate = std::min(rate, u.demand > kEps ? 1.0 / u.demand : 1.0);
      repredict(comp[0], rate);
      comp.clear();
      return;
    }
    // Deterministic order: by priority, then by task id (a total order; components are
    // usually a few tasks, which an insertion sort orders fastest).
    auto before = [this](TaskId a, TaskId b) {
      const auto pa = hot_[static_cast<std::size_t>(a)].priority, pb = hot_[static_cast<std::size_t>(b)].priority;
      return pa != pb ? pa > pb : a < b;
    };
    if (comp.size() <= 16) {
      for (std::size_t k = 1; k < comp.size(); ++k)
        for (std::size_t j = k; j > 0 && before(comp[j], comp[j - 1]); --j) std::swap(comp[j], comp[j - 1]);
    } else {
      std::sort(comp.begin(), comp.end(), before);
    }
    new_rate_.assign(comp.size(), 1.0);
    std::size_t begin = 0;
    while (begin < comp.size()) {
      std::size_t end = begin;
      const auto prio = hot_[static_cast<std::size_t>(comp[begin])].priority;
      while (end < comp.size() && hot_[static_cast<std::size_t>(comp[end])].priority == prio) ++end;
      fill_class(comp, res, begin, end);
      begin = end;
    }
    for (std::size_t k = 0; k < comp.size(); ++k) repredict(comp[k], new_rate_[k]);
    comp.clear();
  }

  // Rates of the tasks comp[begin, end) of one priority class, from what the classes above left
  // of each resource of `res` (capacity_): progressive filling, capped at 1.
  void fill_class(const std::vector<TaskId>& comp, const std::vector<std::int32_t>& res, std::size_t begin,
                  std::size_t end) {
    std::vector<double>& new_rate = new_rate_;
    if (end - begin == 1) {  // alone in its class: what the classes above left, capped at 1
      double rate = 1.0;
      const auto uses = uses_of(comp[begin]);
      for (const auto& u : uses)
        if (u.demand > kEps) rate = std::min(rate, std::max(0.0, capacity_[static_cast<std::size_t>(u.resource)]) / u.demand);
      new_rate[begin] = rate;
      for (const auto& u : uses) capacity_[static_cast<std::size_t>(u.resource)] -= u.demand * rate;
      return;
    }
    std::vector<std::size_t>& unfrozen = unfrozen_;
    unfrozen.clear();
    for (std::size_t k = begin; k < end; ++k) unfrozen.push_back(k);
    while (!unfrozen.empty()) {
      for (auto r : res) load_[static_cast<std::size_t>(r)] = 0.0;
      for (auto k : unfrozen)
        for (const auto& u : uses_of(comp[k])) load_[static_cast<std::size_t>(u.resource)] += u.demand;
      double level = 1.0;
      for (auto rr : res) {  // share_[r]: the rate resource r allows every unfrozen user
        const auto r = static_cast<std::size_t>(rr);
        share_[r] = load_[r] > kEps ? std::max(0.0, capacity_[r]) / load_[r] : kUnlimited;
        level = std::min(level, share_[r]);
      }
      const double tight = level * (1 + 1e-9) + kEps;
      std::vector<std::size_t>& still = still_;
      still.clear();
      for (auto k : unfrozen) {
        bool bottlenecked = level >= 1.0 - kEps;
        for (const auto& u : uses_of(comp[k]))
          if (share_[static_cast<std::size_t>(u.resource)] <= tight) bottlenecked = true;
        if (bottlenecked) {
          new_rate[k] = std::min(1.0, level);
          for (const auto& u : uses_of(comp[k]))
            capacity_[static_cast<std::size_t>(u.resource)] -= u.demand * new_rate[k];
        } else {
          still.push_back(k);
        }
      }
      unfrozen.swap(still);
    }
  }

  void schedule_finish(Time at, TaskId id, std::uint32_t gen) {
    const std::uint64_t arg = (std::uint64_t(std::uint32_t(id)) << 32) | gen;
    engine_.schedule_at(at, &Runner::on_finish, this, arg);
  }
  static void on_finish(void* self, std::uint64_t arg) {
    static_cast<Runner*>(self)->finish(TaskId(std::uint32_t(arg >> 32)), std::uint32_t(arg));
  }

  // Gives task `id` its new rate and, if it changed, a new predicted finish.
  void repredict(TaskId id, double rate) {
    const auto i = static_cast<std::size_t>(id);
    if (std::abs(rate - rate_[i]) <= 1e-12 && rate_[i] > 0.0) return;
    const Time now = engine_.now();
    remaining_ps_[i] -= rate_[i] * static_cast<double>((now - ref_[i]).ps());
    remaining_ps_[i] = std::max(0.0, remaining_ps_[i]);
    ref_[i] = now;
    rate_[i] = rate;
    const std::uint32_t gen = ++gen_[i];
    if (rate <= kEps) return;  // starved until a higher-priority task ends
    const auto dt = static_cast<std::int64_t>(std::ceil(remaining_ps_[i] / rate - 1e-6));
    schedule_finish(now + Time::from_ps(dt), id, gen);
  }

  // Per task, what every event reads (rather than a view rebuilt from the graph each time).
  struct Hot {
    const ResourceUse* uses;
    std::uint32_t n_uses;
    std::int32_t priority;
    std::int64_t work_ps;
  };
  std::span<const ResourceUse> uses_of(TaskId id) const {
    const Hot& h = hot_[static_cast<std::size_t>(id)];
    return {h.uses, h.n_uses};
  }

  std::size_t n_ = 0;
  std::vector<Hot> hot_;
  Engine engine_;
  RunResult result_;
  std::vector<std::int32_t> pending_;
  std::vector<double> remaining_ps_;
  std::vector<double> rate_;
  std::vector<Time> ref_;
  std::vector<std::uint32_t> gen_;
  std::vector<TaskId> next_in_stream_;
  std::vector<std::int32_t> dependents_start_;
  std::vector<TaskId> dependents_;
  std::vector<double> capacity_;
  std::vector<double> load_;
  std::vector<double> share_;
  std::vector<std::vector<TaskId>> users_;  // active tasks per resource
  std::vector<std::int32_t> dirty_;          // resources whose users changed since the last reshare
  std::vector<char> dirty_mark_;
  std::vector<char> in_comp_;
  std::vector<TaskId> unconstrained_;        // started tasks that use no resource
  // reshare() scratch, kept between events.
  std::vector<TaskId> comp_;
  std::vector<std::int32_t> res_;
  std::vector<std::size_t> unfrozen_, still_;
  std::vector<double> new_rate_;
  std::vector<TaskId> last_in_stream_;  // load() scratch
  std::vector<std::int32_t> fill_;
  std::size_t finished_ = 0;
};

}  // namespace

RunResult run_task_graph(const TaskGraph& graph) {
  thread_local Runner runner;  // handlers never re-enter run_task_graph
  runner.load(graph);
  return runner.run();
}

}  // namespace clustersim::sim
