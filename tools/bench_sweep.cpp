// Sweep speed benchmark (not a test: it asserts nothing). Prints
//  1. configurations/s of `sweep --auto-parallel` for Llama-3 70B on 1024 H100, on all cores,
//     and the mean single-thread cost of a configuration by outcome (invalid, out of memory,
//     simulated) over a sample — the rate depends on how many plans the loader accepts;
//  2. the same for Llama-3 8B on 256 H100;
//  3. the wall time of one `run` of Llama-3 405B on 16,384 H100 (TP8 PP16 DP128, seq 8192,
//     global batch 2048, full recompute so that it fits, 126 layers split 15x8 + 6), or the
//     loader's reason when it cannot be simulated;
//  4. events simulated per second by one large step simulation (70B FSDP, ~6k tasks);
//  5. configurations/s of `sweep --auto-parallel` for DeepSeek-V3 on 1024 H100 (the plans
//     include ep and etp), and the wall time of one DeepSeek-V3 step on 2048 H800 in the
//     report's layout (PP16 EP64 DP128, ZeRO-1, FP8 blockwise, DeepEP-style dispatch;
//     DeepSeek-V3 §3.2), one thread.
// Usage: clustersim_bench_sweep [threads (0: every core)] [n: sweep only every n-th configuration] [moe: only 5.]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>

#include "scenarios/error.hpp"
#include "scenarios/scenario_template.hpp"
#include "scenarios/simulate.hpp"
#include "tools/allocator_tuning.hpp"
#include "studies/sweep_engine.hpp"

using namespace clustersim;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string scenario(const char* model, int gpus, int seq, int batch, const char* hardware = "h100-sxm") {
  return fmt::format("name: bench\nmodel: {}\nhardware: {}\ncluster:\n  gpus: {}\ntraining:\n  seq_len: {}\n"
                     "  global_batch: {}\n  tokens: 15e12\n", model, hardware, gpus, seq, batch);
}

void bench_sweep(const char* what, const std::string& yaml, int gpus, int threads, std::uint64_t every) {
  const scenarios::ScenarioTemplate base(yaml, "bench");
  studies::PlanGrid grid;
  studies::set_model_grid(base, {}, &grid);  // the model's rules; MoE models also search ep / etp
  const studies::SweepSpace space({}, true, {}, gpus, grid);
  studies::SweepOptions opt;
  opt.threads = threads;
  opt.shard = {0, every};
  std::uint64_t rows = 0;
  const auto stats = studies::run_sweep(base, space, opt, [&](const studies::Row&) { ++rows; });
  // The rate counts every configuration, the loader's rejections (cheap) too; the valid rate
  // counts only those it accepts (simulated or out of memory).
  const std::uint64_t rejected = stats.invalid + stats.errors, valid = stats.evaluated - rejected;
  fmt::print(
      "{}: {} of {} configurations in {:.3f} s on {} threads = {:.0f} configurations/s, {:.0f} valid "
      "configurations/s ({} simulated of which {} took a ZeRO-1/2 twin's step, {} out of memory, {} invalid; "
      "{:.3g} simulated events/s)\n",
      what, stats.evaluated, space.size(), stats.wall_s, stats.threads, double(stats.evaluated) / stats.wall_s,
      double(valid) / stats.wall_s, stats.ok, stats.reused_steps, stats.out_of_memory, rejected,
      double(stats.events) / stats.wall_s);
  // Single-thread cost by outcome, over a sample of at most ~300 configurations.
  std::map<studies::Status, std::pair<double, std::uint64_t>> by_status;
  const std::uint64_t stride = std::max<std::uint64_t>(every, space.size() / 300);
  for (std::uint64_t i = 0; i < space.size(); i += stride) {
    const auto t = Clock::now();
    const auto row = studies::evaluate(base, space, space.at(i), opt);
    auto& [s, n] = by_status[row.status];
    s += seconds_since(t);
    ++n;
  }
  for (const auto& [status, sn] : by_status)
    fmt::print("    {:>14}: {:8.1f} us per configuration (one thread, {} configurations)\n", studies::name(status),
               1e6 * sn.first / double(sn.second), sn.second);
}

void bench_moe(int threads, std::uint64_t every) {
  bench_sweep("sweep --auto-parallel, DeepSeek-V3 on 1024 H100 (seq 4096, batch 4096; ep, etp searched)",
              scenario("deepseek-v3", 1024, 4096, 4096), 1024, threads, every);
  const std::vector<std::string> plan = {"parallelism.pp=16", "parallelism.ep=64", "parallelism.zero_stage=1",
                                         "training.precision=fp8", "training.fp8_recipe=blockwise",
                                         "training.moe_dispatcher=deepep", "training.recompute=selective",
                                         "training.recompute_modules=[layernorm, mla_up_proj]"};
  try {
    const auto sc = scenarios::ScenarioTemplate(scenario("deepseek-v3", 2048, 4096, 15360, "h800"), "bench")
                        .instantiate(plan);
    double first = 0, best = 1e300;
    scenarios::Report r;
    for (int i = 0; i < 3; ++i) {  // the first run also fills the process's caches (routing plans)
      const auto t = Clock::now();
      r = scenarios::simulate(sc);
      const double s = seconds_since(t);
      if (i == 0) first = s;
      best = std::min(best, s);
    }
    fmt::print("run DeepSeek-V3 on 2048 H800 (PP16 EP64 DP128, batch 15360): {:.1f} ms wall first run, {:.1f} ms best "
               "of 3 (one thread) [<= 30 ms], {} tasks, {} events, {:.0f} tokens/s per GPU{}\n",
               1e3 * first, 1e3 * best, r.step.tasks, r.step.events, r.tokens_per_s_per_gpu,
               r.memory.fits() ? "" : " (does not fit in memory)");
  } catch (const scenarios::ScenarioError& e) {
    fmt::print("run DeepSeek-V3 on 2048 H800: not simulated: {}\n", e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  tools::keep_freed_memory_for_reuse();
  const int threads = argc > 1 ? std::atoi(argv[1]) : 0;
  const std::uint64_t every = argc > 2 ? std::max(1, std::atoi(argv[2])) : 1;
  fmt::print("hardware threads: {}\n", std::thread::hardware_concurrency());
  if (argc > 3 && std::string(argv[3]) == "moe") {
    bench_moe(threads, every);
    return 0;
  }
  bench_sweep("sweep --auto-parallel, Llama-3 70B on 1024 H100 (seq 8192, batch 1024) [>= 5,000/s on 2 threads]",
              scenario("llama3-70b", 1024, 8192, 1024), 1024, threads, every);
  bench_sweep("sweep --auto-parallel, Llama-3 8B on 256 H100 (seq 8192, batch 512) [>= 3,000/s]",
              scenario("llama3-8b", 256, 8192, 512), 256, threads, every);

  const std::string big = scenario("llama3-405b", 16384, 8192, 2048);
  const std::vector<std::string> plan = {"parallelism.tp=8", "parallelism.pp=16",
                                         "parallelism.pp_layers=[8,8,8,8,8,8,8,8,8,8,8,8,8,8,8,6]",
                                         "parallelism.sequence_parallel=true", "parallelism.zero_stage=1",
                                         "training.recompute=full"};
  try {
    const auto sc = scenarios::ScenarioTemplate(big, "bench").instantiate(plan);
    const auto t = Clock::now();
    const auto r = scenarios::simulate(sc);
    fmt::print("run Llama-3 405B on 16384 H100 (TP8 PP16 DP128): {:.3f} s wall [<= 50 ms], {} tasks, {} events{}\n",
               seconds_since(t), r.step.tasks, r.step.events, r.memory.fits() ? "" : " (does not fit in memory)");
  } catch (const scenarios::ScenarioError& e) {
    fmt::print("run Llama-3 405B on 16384 H100 (TP8 PP16 DP128): not simulated yet: {}\n", e.what());
  }

  // Events per second on one large step graph: Llama-3 70B on 1024 H100, TP8 DP128 with ZeRO-3
  // (FSDP: per-block gathers and reduce-scatters in every pass), 16 micro-batches.
  const auto sc = scenarios::ScenarioTemplate(scenario("llama3-70b", 1024, 8192, 2048), "bench")
                      .instantiate({"parallelism.tp=8", "parallelism.sequence_parallel=true",
                                    "parallelism.zero_stage=3", "training.recompute=full"});
  std::uint64_t events = 0, tasks = 0;
  int runs = 0;
  const auto t = Clock::now();
  while (seconds_since(t) < 2.0) {
    const auto r = scenarios::simulate(sc);
    events += r.step.events, tasks += r.step.tasks, ++runs;
  }
  const double s = seconds_since(t);
  fmt::print("events: {:.3g} events/s, {:.3g} tasks/s (Llama-3 70B ZeRO-3 TP8 DP128, 16 micro-batches: {} tasks, "
             "{} events per step, {:.2f} ms per step, one thread)\n",
             double(events) / s, double(tasks) / s, tasks / std::uint64_t(runs), events / std::uint64_t(runs),
             1e3 * s / runs);
  bench_moe(threads, every);
  return 0;
}
