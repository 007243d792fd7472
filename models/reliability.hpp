#pragma once
// What a whole training run costs beyond its ideal steps: failures and restarts, checkpoint
// saves, work lost since the last checkpoint, stragglers, warm-up, and padded tokens.
//
// These break the symmetry the step simulation relies on (DESIGN.md: "stragglers, failures are
// modelled statistically on top"), and a run of 1e5–1e7 steps with a few hundred random failures
// is far too long to put on the event engine. So the run is priced by expected values
// (renewal-reward over checkpoint segments, Daly 2006) and checked against a seeded Monte-Carlo
// replay of the same failure process (monte_carlo_run_s).
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "models/model_spec.hpp"

namespace clustersim::models {

/// Failure causes, grouped from Llama 3 Table 5 (hardware.md §4.1); NVLink faults are counted
/// inside `gpu` there ("Faulty GPU (incl. NVLink)").
enum class FailureCause { gpu, hbm, network, host, software };
constexpr std::array<const char*, 5> kFailureCauseNames = {"gpu", "hbm", "network", "host", "software"};
using FailureRates = std::array<double, 5>;  ///< per GPU-second, indexed by FailureCause

/// Unexpected interruptions per GPU-second by cause: Llama 3 405B, 419 in 54 days on 16,384
/// H100 (hardware.md §4.1 [D]). gpu = faulty GPU 148 + SRAM 19 + GSP 17 + SDC 6 + thermal 6;
/// hbm = 72; network = switch/cable 35 + NIC 7; host = unplanned maintenance 32 + SSD 3 + PSU 3
/// + chassis 2 + IO board 2 + CPU 2 + system memory 2; software = bug 54 + dependency 2 + NCCL
/// watchdog 7.
FailureRates llama3_failure_rates();
/// Planned (automated maintenance) interruptions per GPU-second: 47 in the same window.
double llama3_planned_rate();
/// Storage bandwidth per GPU of the Llama 3 job: 2 TB/s sustained ÷ 16,384 GPUs.
constexpr double kLlama3StorageBpsPerGpu = 2e12 / 16384;

enum class CheckpointMode { sync, async };
enum class Packing { none, bucketed, packed };
inline constexpr NameTable<CheckpointMode, 2> kCheckpointModeNames{{{CheckpointMode::sync, "sync"}, {CheckpointMode::async, "async"}}};
inline constexpr NameTable<Packing, 3> kPackingNames{
    {{Packing::none, "none"}, {Packing::bucketed, "bucketed"}, {Packing::packed, "packed"}}};
const char* name(CheckpointMode m);
const char* name(Packing p);

struct ReliabilitySpec {
  bool enabled = true;
  FailureRates failure_rate_per_gpu_s = llama3_failure_rates();
  double planned_rate_per_gpu_s = llama3_planned_rate();
  /// Aggregate storage bandwidth of the job; 0: the Llama 3 job's per-GPU share of Tectonic's
  /// 2 TB/s sustained (hardware.md §4.1), 2e12 / 16,384 = 122 MB/s per GPU [D], times the GPUs.
  double checkpoint_write_bps = 0;
  double checkpoint_read_bps = 0;
  CheckpointMode checkpoint_mode = CheckpointMode::sync;
  double checkpoint_interval_s = 0;   ///< 0 and no steps: auto (Young)
  long checkpoint_interval_steps = 0;
  /// Detection + rescheduling + process restart, reload excluded (reload = size / read bw).
  /// Default: FlashRecovery's measured 150 s restore on 4,800 devices (hardware.md §4.3), a
  /// state-of-the-art automated recovery; slower stacks should set their own.
  double restart_overhead_s = 150;
  long warmup_steps = 0;              ///< first steps of the run and after each restart
  double warmup_slowdown = 1.0;       ///< their step time ÷ the steady step time
  double straggler_probability = 0;   ///< chance one GPU is slow during a step
  double straggler_slowdown = 1.0;    ///< a slow GPU's compute time ÷ the normal one
};

struct DataSpec {
  double mean_seq_len = 0;                            ///< 0: every sample fills seq_len
  std::vector<std::pair<double, double>> histogram;   ///< (sample length in tokens, weight)
  Packing packing = Packing::packed;
  std::vector<double> buckets;                        ///< bucketed: padded lengths, ascending
};

/// Fraction of the token slots a step computes that hold real tokens (not padding).
/// packed: 1 (samples concatenated to seq_len). none: E[min(L, s)] / s, each sample padded to s.
/// bucketed: E[min(L, s)] / E[bucket(L)], each sample padded to the smallest bucket ≥ its length
/// with the step's token count unchanged; the step is still simulated at seq_len, so a bucket's
/// shorter attention span is not credited (an overestimate of bucketed cost for long s).
double useful_token_fraction(const DataSpec& d, int seq_len);

/// Bytes of one full checkpoint: weights plus mixed-precision Adam state (fp32 master, m, v),
/// the accounting of memory.hpp — 14 B/param for 16-bit training, 12 B/param for fp32, 6 B/param
/// for BF16 weights whose Adam moments stay BF16 (training.optimizer_dtype: bf16).
double checkpoint_bytes(const ParamCount& params, hardware::Precision precision, bool fp32_optimizer_state = true);

/// E[max over ranks] of a step's compute-time factor when each of `ranks` GPUs is independently
/// slow (×slowdown) with probability p: 1 + (slowdown − 1)·(1 − (1 − p)^ranks). Exact for this
/// two-point model; it grows with the rank count toward `slowdown`.
double expected_straggler_factor(double probability, double slowdown, double ranks);

/// Young 1974: the checkpoint interval that minimises first-order expected loss,
/// τ = √(2·δ·M) for blocking save cost δ and job MTBF M.
double young_interval_s(double save_s, double mtbf_s);

/// Daly 2006 (FGCS 22(3), exact for exponential failures, restarts may fail too): expected wall
/// time to finish one segment of `work_s` followed by a `save_s` checkpoint,
/// M·e^{R/M}·(e^{(τ+δ)/M} − 1).
double daly_segment_s(double work_s, double save_s, double restart_s, double mtbf_s);

struct RunInputs {
  double step_time_s = 0;          ///< simulated steady step
  double compute_time_s = 0;       ///< its compute part (what a slow GPU stretches)
  double steps = 0;                ///< optimizer steps in the run (tokens ÷ useful tokens/step)
  double useful_fraction = 1;      ///< useful_token_fraction()
  double num_gpus = 1;
  double checkpoint_bytes = 0;
  double host_copy_bps = 0;        ///< per GPU, device → host (async snapshot)
};

struct LostTime {                  ///< seconds over the run; with useful_s they sum to expected_s
  double padding_s = 0;
  double stragglers_s = 0;
  double warmup_s = 0;
  double checkpoint_s = 0;         ///< blocking saves
  double restart_s = 0;            ///< detection + rescheduling + reload
  double lost_work_s = 0;          ///< rework since the last durable checkpoint
};

struct RunEstimate {
  double ideal_s = 0;              ///< steps × step time: no failures, stragglers or warm-up
  double expected_s = 0;
  double useful_s = 0;             ///< ideal time spent on real (unpadded) tokens
  double goodput = 0;              ///< useful_s ÷ expected_s
  LostTime lost;
  double job_mtbf_s = 0;           ///< unexpected failures only (inf when none)
  double expected_failures = 0;
  double expected_planned = 0;
  double expected_interruptions = 0;
  double checkpoint_interval_s = 0;     ///< work between checkpoints (0: none taken)
  double checkpoint_interval_steps = 0;
  double checkpoint_save_s = 0;         ///< blocking part of one save
  double checkpoint_write_s = 0;        ///< until durable on storage
  double restart_s = 0;                 ///< one restart: overhead + reload
  double straggler_factor = 1;
  // What monte_carlo_run_s replays.
  double progress_s = 0;                ///< work incl. stragglers and the first warm-up
  double segment_restart_s = 0;         ///< one restart incl. its warm-up
};

/// Expected-value model of the run (statistical, see the file comment). With `spec.enabled`
/// false it returns expected_s == ideal_s exactly.
RunEstimate estimate_run(const RunInputs& in, const ReliabilitySpec& spec);

/// Replays the run `runs` times with exponential failure and planned-maintenance times drawn
/// from a 64-bit Mersenne Twister seeded with `seed` (same seed → same numbers on any platform).
/// Returns each run's wall time in seconds, sorted ascending.
std::vector<double> monte_carlo_run_s(const RunEstimate& plan, const ReliabilitySpec& spec, double num_gpus,
                                      int runs, std::uint64_t seed);

/// Linear-interpolated percentile (0..100) of ascending `sorted`.
double percentile(const std::vector<double>& sorted, double pct);

}  // namespace clustersim::models
