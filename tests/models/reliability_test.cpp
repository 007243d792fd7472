#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>

#include "models/reliability.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::models;

namespace {

// A 1,024-GPU job with 6 s steps, 1 TB checkpoints and 30 days of work.
RunInputs thousand_gpu_run() {
  RunInputs in;
  in.step_time_s = 6.0;
  in.compute_time_s = 5.0;
  in.steps = 30 * 86400 / 6.0;
  in.num_gpus = 1024;
  in.checkpoint_bytes = 1e12;
  in.host_copy_bps = 25e9;
  return in;
}

double total_rate(const FailureRates& r) { return std::accumulate(r.begin(), r.end(), 0.0); }

}  // namespace

TEST_CASE("Llama 3 failure rates by cause add up to the 419 unexpected interruptions", "[models][reliability]") {
  const double gpu_seconds = 16384.0 * 54 * 86400;
  CHECK(total_rate(llama3_failure_rates()) * gpu_seconds == Approx(419).epsilon(1e-12));
  CHECK(llama3_planned_rate() * gpu_seconds == Approx(47).epsilon(1e-12));
  CHECK(llama3_failure_rates()[int(FailureCause::hbm)] * gpu_seconds == Approx(72));
}

TEST_CASE("disabled reliability gives the ideal run time exactly", "[models][reliability]") {
  ReliabilitySpec off;
  off.enabled = false;
  off.straggler_probability = 0.5;
  off.straggler_slowdown = 2;
  off.warmup_steps = 100;
  off.warmup_slowdown = 3;
  const RunEstimate e = estimate_run(thousand_gpu_run(), off);
  CHECK(e.expected_s == e.ideal_s);
  CHECK(e.goodput == 1.0);
  CHECK(e.expected_interruptions == 0);
}

TEST_CASE("lost time parts and useful time add up to the expected wall time", "[models][reliability]") {
  ReliabilitySpec spec;
  spec.warmup_steps = 50;
  spec.warmup_slowdown = 1.5;
  spec.straggler_probability = 1e-4;
  spec.straggler_slowdown = 1.3;
  RunInputs in = thousand_gpu_run();
  in.useful_fraction = 0.8;
  const RunEstimate e = estimate_run(in, spec);
  const auto& l = e.lost;
  for (double part : {l.padding_s, l.stragglers_s, l.warmup_s, l.checkpoint_s, l.restart_s, l.lost_work_s})
    CHECK(part > 0);
  CHECK(e.useful_s + l.padding_s + l.stragglers_s + l.warmup_s + l.checkpoint_s + l.restart_s + l.lost_work_s ==
        Approx(e.expected_s).epsilon(1e-12));
  CHECK(e.goodput == Approx(e.useful_s / e.expected_s));
  CHECK(e.goodput < 0.8);

  // A restart longer than the job MTBF: many restarts are cut short, still no negative part.
  in.num_gpus = 1e6;
  spec.restart_overhead_s = 3600;
  const RunEstimate bad = estimate_run(in, spec);
  REQUIRE(bad.restart_s > bad.job_mtbf_s);
  for (double part : {bad.lost.restart_s, bad.lost.warmup_s, bad.lost.checkpoint_s, bad.lost.lost_work_s})
    CHECK(part >= 0);
  CHECK(bad.goodput < 0.1);
}

TEST_CASE("Young's auto interval sits at the minimum of the expected run time", "[models][reliability]") {
  const RunInputs in = thousand_gpu_run();
  ReliabilitySpec spec;
  const RunEstimate best = estimate_run(in, spec);
  REQUIRE(best.checkpoint_interval_steps > 1);
  CHECK(best.checkpoint_interval_s == Approx(young_interval_s(best.checkpoint_save_s, best.job_mtbf_s)).epsilon(0.02));
  for (double factor : {0.5, 0.8, 1.25, 2.0}) {
    ReliabilitySpec other = spec;
    other.checkpoint_interval_steps = long(std::lround(best.checkpoint_interval_steps * factor));
    const RunEstimate e = estimate_run(in, other);
    INFO("interval factor " << factor);
    CHECK(e.expected_s > best.expected_s);
  }
}

TEST_CASE("Daly's segment time reduces to work + save without failures and grows with them", "[models][reliability]") {
  CHECK(daly_segment_s(100, 5, 30, INFINITY) == 105);
  // First order: (τ+δ)·(1 + (τ+δ)/2M + R/M).
  const double m = 1e6, t = daly_segment_s(100, 5, 30, m);
  CHECK(t == Approx(105 * (1 + 105 / (2 * m) + 30 / m)).epsilon(1e-8));
}

TEST_CASE("more GPUs at the same per-GPU rate give more interruptions and lower goodput", "[models][reliability]") {
  ReliabilitySpec spec;
  RunInputs small = thousand_gpu_run(), large = thousand_gpu_run();
  large.num_gpus = 16384;
  const RunEstimate a = estimate_run(small, spec), b = estimate_run(large, spec);
  CHECK(b.job_mtbf_s == Approx(a.job_mtbf_s / 16));
  CHECK(b.expected_interruptions > 10 * a.expected_interruptions);
  CHECK(b.goodput < a.goodput);
}

TEST_CASE("asynchronous checkpointing beats synchronous for a large checkpoint", "[models][reliability]") {
  RunInputs in = thousand_gpu_run();
  in.checkpoint_bytes = 20e12;  // 20 TB: 160 s to storage at the default 125 GB/s
  ReliabilitySpec sync, async;
  async.checkpoint_mode = CheckpointMode::async;
  const RunEstimate s = estimate_run(in, sync), a = estimate_run(in, async);
  CHECK(a.checkpoint_save_s < s.checkpoint_save_s / 100);
  CHECK(a.checkpoint_write_s == s.checkpoint_write_s);
  CHECK(a.goodput > s.goodput);
  // The next async save waits until the previous one is durable.
  CHECK(a.checkpoint_interval_s + a.checkpoint_save_s >= a.checkpoint_write_s);
}

TEST_CASE("expected straggler factor: exact two-point max that grows with ranks", "[models][reliability]") {
  CHECK(expected_straggler_factor(0, 2, 1e6) == 1);
  CHECK(expected_straggler_factor(1e-3, 2, 1) == Approx(1.001));
  CHECK(expected_straggler_factor(1e-3, 2, 2) == Approx(1 + (1 - 0.999 * 0.999)));
  double last = 1;
  for (double ranks : {8.0, 256.0, 4096.0, 65536.0}) {
    const double f = expected_straggler_factor(1e-4, 1.5, ranks);
    CHECK(f > last);
    CHECK(f < 1.5);
    last = f;
  }
  CHECK(expected_straggler_factor(1e-4, 1.5, 1e7) == Approx(1.5));
}

TEST_CASE("padding: useful token fraction by packing mode", "[models][reliability]") {
  DataSpec d;
  CHECK(useful_token_fraction(d, 4096) == 1);
  d.packing = Packing::none;
  d.mean_seq_len = 1024;
  CHECK(useful_token_fraction(d, 4096) == Approx(0.25));
  d.mean_seq_len = 0;
  d.histogram = {{500, 1}, {3000, 1}, {9000, 2}};  // the 9000s are truncated to 4096
  const double real = 500 + 3000 + 2 * 4096.0;
  CHECK(useful_token_fraction(d, 4096) == Approx(real / (4 * 4096.0)));
  d.packing = Packing::bucketed;
  d.buckets = {512, 1024, 4096};
  CHECK(useful_token_fraction(d, 4096) == Approx(real / (512 + 4096 + 2 * 4096.0)));
  d.buckets.clear();  // default buckets: powers of two up to seq_len
  CHECK(useful_token_fraction(d, 4096) == Approx(real / (512 + 4096 + 2 * 4096.0)));
  d.packing = Packing::packed;
  CHECK(useful_token_fraction(d, 4096) == 1);
}

TEST_CASE("checkpoint size: weights plus Adam state", "[models][reliability]") {
  ParamCount p;
  p.total = 1e9;
  CHECK(checkpoint_bytes(p, clustersim::hardware::Precision::bf16) == 14e9);
  CHECK(checkpoint_bytes(p, clustersim::hardware::Precision::fp32) == 12e9);
}

TEST_CASE("Monte-Carlo mean run time matches the analytic expectation", "[models][reliability]") {
  // Failures matter (~125 a run) and a save takes 50 s to reach storage, so the async window in
  // which a failure also loses the previous segment is exercised.
  RunInputs in = thousand_gpu_run();
  in.num_gpus = 8192;
  in.checkpoint_bytes = 50e12;
  for (auto mode : {CheckpointMode::sync, CheckpointMode::async}) {
    ReliabilitySpec spec;
    spec.checkpoint_mode = mode;
    spec.restart_overhead_s = 600;
    spec.checkpoint_interval_s = 1800;
    const RunEstimate e = estimate_run(in, spec);
    const int runs = 400;
    const auto walls = monte_carlo_run_s(e, spec, in.num_gpus, runs, 42);
    REQUIRE(walls.size() == std::size_t(runs));
    const double mean = std::accumulate(walls.begin(), walls.end(), 0.0) / runs;
    double var = 0;
    for (double w : walls) var += (w - mean) * (w - mean);
    const double stderr_s = std::sqrt(var / (runs - 1) / runs);
    INFO("mode " << name(mode) << " analytic " << e.expected_s << " MC " << mean << " ± " << stderr_s
                 << " failures " << e.expected_failures);
    CHECK(e.expected_failures > 100);
    CHECK(std::abs(mean - e.expected_s) < 3 * stderr_s);
    CHECK(percentile(walls, 10) < percentile(walls, 50));
    CHECK(percentile(walls, 50) < percentile(walls, 90));
  }
}

TEST_CASE("Monte-Carlo replay is deterministic for a seed", "[models][reliability]") {
  ReliabilitySpec spec;
  const RunInputs in = thousand_gpu_run();
  const RunEstimate e = estimate_run(in, spec);
  CHECK(monte_carlo_run_s(e, spec, in.num_gpus, 20, 7) == monte_carlo_run_s(e, spec, in.num_gpus, 20, 7));
  CHECK(monte_carlo_run_s(e, spec, in.num_gpus, 20, 7) != monte_carlo_run_s(e, spec, in.num_gpus, 20, 8));
}

TEST_CASE("Monte-Carlo replay also puts the auto interval below its neighbours", "[models][reliability]") {
  RunInputs in = thousand_gpu_run();
  in.num_gpus = 16384;
  in.checkpoint_bytes = 5.7e12;  // Llama 3 405B: 405e9 params × 14 B
  ReliabilitySpec spec;
  const RunEstimate best = estimate_run(in, spec);
  auto mc_mean = [&](const RunEstimate& plan) {
    const auto walls = monte_carlo_run_s(plan, spec, in.num_gpus, 300, 11);
    return std::accumulate(walls.begin(), walls.end(), 0.0) / double(walls.size());
  };
  const double at_best = mc_mean(best);
  for (double factor : {0.4, 2.5}) {
    ReliabilitySpec other = spec;
    other.checkpoint_interval_steps = long(std::lround(best.checkpoint_interval_steps * factor));
    const double at_other = mc_mean(estimate_run(in, other));
    INFO("interval factor " << factor << ": " << at_other << " s vs " << at_best << " s at the auto interval");
    CHECK(at_other > at_best);
  }
}

}}  // namespace CLUSTERSIM_TEST_ID
