#include "models/reliability.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace clustersim::models {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Llama 3 snapshot (hardware.md §4.1): 54 days on 16,384 GPUs.
constexpr double kLlama3GpuSeconds = 16384.0 * 54 * 86400;

// Uniform in (0, 1) from the top 53 bits: std::mt19937_64's output sequence is fixed by the
// standard, std::*_distribution's mapping is not, so we map it ourselves for determinism.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  double exponential(double mean) {
    const double u = (double(engine_() >> 11) + 0.5) * 0x1.0p-53;
    return -mean * std::log(u);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace

FailureRates llama3_failure_rates() {
  FailureRates r{};
  r[int(FailureCause::gpu)] = (148 + 19 + 17 + 6 + 6) / kLlama3GpuSeconds;
  r[int(FailureCause::hbm)] = 72 / kLlama3GpuSeconds;
  r[int(FailureCause::network)] = (35 + 7) / kLlama3GpuSeconds;
  r[int(FailureCause::host)] = (32 + 3 + 3 + 2 + 2 + 2 + 2) / kLlama3GpuSeconds;
  r[int(FailureCause::software)] = (54 + 2 + 7) / kLlama3GpuSeconds;
  return r;
}

double llama3_planned_rate() { return 47 / kLlama3GpuSeconds; }

const char* name(CheckpointMode m) { return name_in(kCheckpointModeNames, m).data(); }
const char* name(Packing p) { return name_in(kPackingNames, p).data(); }

double useful_token_fraction(const DataSpec& d, int seq_len) {
  if (d.packing == Packing::packed) return 1.0;
  const double s = seq_len;
  auto hist = d.histogram;
  if (hist.empty()) hist.emplace_back(d.mean_seq_len > 0 ? d.mean_seq_len : s, 1.0);
  std::vector<double> buckets = d.buckets;
  if (buckets.empty())
    for (double b = 1; b < s; b *= 2) buckets.push_back(b);
  buckets.push_back(s);  // nothing is padded past seq_len
  double real = 0, slots = 0;
  for (const auto& [length, weight] : hist) {
    const double kept = std::min(length, s);  // longer samples are truncated, not padded
    real += weight * kept;
    if (d.packing == Packing::none) {
      slots += weight * s;
    } else {
      const auto it = std::find_if(buckets.begin(), buckets.end(), [&](double b) { return b >= kept; });
      slots += weight * (it == buckets.end() ? s : std::min(*it, s));
    }
  }
  return slots > 0 ? real / slots : 1.0;
}

double checkpoint_bytes(const ParamCount& params, hardware::Precision precision, bool fp32_optimizer_state) {
  const bool fp32_weights = precision == hardware::Precision::fp32 || precision == hardware::Precision::tf32;
  return params.total * (fp32_weights ? 4.0 + 8.0 : fp32_optimizer_state ? 2.0 + 12.0 : 2.0 + 4.0);
}

double expected_straggler_factor(double probability, double slowdown, double ranks) {
  if (probability <= 0 || slowdown <= 1) return 1.0;
  const double any_slow = -std::expm1(ranks * std::log1p(-std::min(probability, 1.0)));
  return 1.0 + (slowdown - 1.0) * any_slow;
}

double young_interval_s(double save_s, double mtbf_s) { return std::sqrt(2.0 * save_s * mtbf_s); }

double daly_segment_s(double work_s, double save_s, double restart_s, double mtbf_s) {
  if (!std::isfinite(mtbf_s)) return work_s + save_s;
  return mtbf_s * std::exp(restart_s / mtbf_s) * std::expm1((work_s + save_s) / mtbf_s);
}

namespace {

// Checkpoints are taken at step boundaries. An async save cannot start before the previous one
// is durable, so its interval is at least the write time.
double checkpoint_interval_steps(const ReliabilitySpec& spec, const RunEstimate& e, double mtbf, double step_s,
                                 bool async) {
  double interval_steps = 0;
  if (spec.checkpoint_interval_steps > 0) {
    interval_steps = double(spec.checkpoint_interval_steps);
  } else {
    double target_s = spec.checkpoint_interval_s;
    if (target_s <= 0 && std::isfinite(mtbf)) target_s = young_interval_s(e.checkpoint_save_s, mtbf);
    if (target_s > 0) interval_steps = std::max(1.0, std::round(target_s / step_s));
  }
  if (interval_steps > 0 && async)
    interval_steps = std::max(interval_steps, std::ceil((e.checkpoint_write_s - e.checkpoint_save_s) / step_s));
  return interval_steps;
}

}  // namespace

RunEstimate estimate_run(const RunInputs& in, const ReliabilitySpec& spec) {
  if (in.steps <= 0) {
    // No token budget: report the steady-state rates of a long run, and no totals.
    RunInputs nominal = in;
    nominal.steps = 1e6;
    ReliabilitySpec steady = spec;
    steady.warmup_steps = 0;
    RunEstimate e = estimate_run(nominal, steady);
    const RunEstimate totals_zeroed{};
    e.ideal_s = e.expected_s = e.useful_s = e.progress_s = 0;
    e.lost = totals_zeroed.lost;
    e.expected_failures = e.expected_planned = e.expected_interruptions = 0;
    return e;
  }
  RunEstimate e;
  const double t = in.step_time_s, n_gpus = in.num_gpus;
  e.ideal_s = in.steps * t;
  e.useful_s = e.ideal_s * in.useful_fraction;
  e.lost.padding_s = e.ideal_s - e.useful_s;
  e.job_mtbf_s = kInf;
  e.progress_s = e.ideal_s;
  if (!spec.enabled) {
    e.expected_s = e.ideal_s;
    e.goodput = e.useful_s / e.expected_s;
    return e;
  }

  // Stragglers: a synchronous step waits for its slowest rank, whose compute is stretched.
  e.straggler_factor = expected_straggler_factor(spec.straggler_probability, spec.straggler_slowdown, n_gpus);
  const double step_s = t + (e.straggler_factor - 1.0) * in.compute_time_s;
  e.lost.stragglers_s = in.steps * (step_s - t);
  const double warmup_extra_s = double(spec.warmup_steps) * (spec.warmup_slowdown - 1.0) * t;
  const double first_warmup_s = std::min(double(spec.warmup_steps), in.steps) * (spec.warmup_slowdown - 1.0) * t;
  e.progress_s = e.ideal_s + e.lost.stragglers_s + first_warmup_s;

  const double failure_rate = n_gpus * std::accumulate(spec.failure_rate_per_gpu_s.begin(),
                                                       spec.failure_rate_per_gpu_s.end(), 0.0);
  const double mtbf = failure_rate > 0 ? 1.0 / failure_rate : kInf;
  e.job_mtbf_s = mtbf;
  const bool async = spec.checkpoint_mode == CheckpointMode::async;
  const double write_bps = spec.checkpoint_write_bps > 0 ? spec.checkpoint_write_bps : n_gpus * kLlama3StorageBpsPerGpu;
  const double read_bps = spec.checkpoint_read_bps > 0 ? spec.checkpoint_read_bps : n_gpus * kLlama3StorageBpsPerGpu;
  e.checkpoint_write_s = in.checkpoint_bytes / write_bps;
  // Async: training pauses only while each GPU copies its shard to host memory.
  e.checkpoint_save_s = async && in.host_copy_bps > 0 ? in.checkpoint_bytes / n_gpus / in.host_copy_bps
                                                      : e.checkpoint_write_s;
  e.restart_s = spec.restart_overhead_s + in.checkpoint_bytes / read_bps;
  e.segment_restart_s = e.restart_s + warmup_extra_s;

  const double interval_steps = checkpoint_interval_steps(spec, e, mtbf, step_s, async);
  e.checkpoint_interval_steps = interval_steps;
  e.checkpoint_interval_s = interval_steps * step_s;

  // Unexpected failures: Daly's segment time. An async save becomes durable only write_s after it
  // starts; a failure in that window also loses the previous segment, on average write_s more
  // rework per failure (first order in write_s / interval), priced as extra restart time.
  const double tau = e.checkpoint_interval_s;
  const double segments = tau > 0 ? e.progress_s / tau : 0;
  const double rework_s = async ? e.checkpoint_write_s : 0;
  const double unexpected_s = tau > 0 ? segments * daly_segment_s(tau, e.checkpoint_save_s, e.segment_restart_s + rework_s, mtbf)
                                      : e.progress_s;
  e.expected_failures = std::isfinite(mtbf) ? unexpected_s / mtbf : 0;  // Wald: E[N(T)] = E[T]/M
  // Planned maintenance checkpoints first, so it costs a restart and no rework.
  const double planned_rate = n_gpus * spec.planned_rate_per_gpu_s;
  e.expected_planned = planned_rate * unexpected_s;
  e.expected_s = unexpected_s + e.expected_planned * e.segment_restart_s;
  e.expected_interruptions = e.expected_failures + e.expected_planned;

  // A failure during a restart cuts it short: each failure spends E[min(R, Exp(M))] =
  // M·(1 − e^{−R/M}) restarting, shared pro rata among the restart's parts.
  const double restart_phase_s = e.segment_restart_s + rework_s;
  const double completed = std::isfinite(mtbf) && restart_phase_s > 0
                               ? -mtbf * std::expm1(-restart_phase_s / mtbf) / restart_phase_s : 1.0;
  e.lost.checkpoint_s = segments * e.checkpoint_save_s;
  e.lost.restart_s = (e.expected_failures * completed + e.expected_planned) * e.restart_s;
  e.lost.warmup_s = first_warmup_s + (e.expected_failures * completed + e.expected_planned) * warmup_extra_s;
  e.lost.lost_work_s = e.expected_s - e.useful_s - e.lost.padding_s - e.lost.stragglers_s - e.lost.warmup_s -
                       e.lost.checkpoint_s - e.lost.restart_s;
  e.goodput = e.useful_s / e.expected_s;
  return e;
}

std::vector<double> monte_carlo_run_s(const RunEstimate& plan, const ReliabilitySpec& spec, double num_gpus,
                                      int runs, std::uint64_t seed) {
  Rng rng(seed);
  const double tau = plan.checkpoint_interval_s, save = plan.checkpoint_save_s;
  const double restart = plan.segment_restart_s, mtbf = plan.job_mtbf_s;
  const double write = spec.checkpoint_mode == CheckpointMode::async ? plan.checkpoint_write_s : 0;
  const double planned_mean = 1.0 / (num_gpus * spec.planned_rate_per_gpu_s);
  const bool failures = spec.enabled && tau > 0 && std::isfinite(mtbf);
  const double full = failures ? std::floor(plan.progress_s / tau) : 0;
  const double last = plan.progress_s - full * tau;
  const double count = full + (last > 1e-9 * tau ? 1 : 0);
  std::vector<double> out;
  out.reserve(std::size_t(std::max(runs, 0)));
  for (int run = 0; run < runs; ++run) {
    double wall = 0;
    if (!failures) {
      wall = plan.expected_s;
      out.push_back(wall);
      continue;
    }
    double segment = 0, to_failure = rng.exponential(mtbf);
    bool after_save = false;  // this segment began at a save that may not be durable yet
    while (segment < count) {
      const double length = (segment < full ? tau : last) + save;
      if (to_failure >= length) {
        // Memoryless: skip every whole segment that ends before the failure at once.
        const double k = segment < full ? std::min(std::floor(to_failure / length), full - segment) : 1;
        wall += k * length, to_failure -= k * length, segment += k;
        after_save = write > 0;
        continue;
      }
      wall += to_failure;
      if (after_save && to_failure < write && segment > 0) segment -= 1;
      for (;;) {  // restart, which a failure may interrupt
        const double next = rng.exponential(mtbf);
        if (next >= restart) break;
        wall += next;
      }
      wall += restart;
      to_failure = rng.exponential(mtbf);
      after_save = false;
    }
    if (spec.planned_rate_per_gpu_s > 0) {
      double planned = 0;
      for (double at = rng.exponential(planned_mean); at < wall; at += rng.exponential(planned_mean)) ++planned;
      wall += planned * restart;
    }
    out.push_back(wall);
  }
  std::sort(out.begin(), out.end());
  return out;
}

double percentile(const std::vector<double>& sorted, double pct) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  const double pos = std::clamp(pct, 0.0, 100.0) / 100.0 * double(sorted.size() - 1);
  const std::size_t lo = std::size_t(pos);
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace clustersim::models
