#include "hardware/kernel_cost.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <utility>

#include "hardware/attention_model.hpp"

namespace clustersim::hardware {
namespace {

// A contraction or leading dimension that is not a multiple of 16 bytes cannot use the
// vectorized/TMA loads, and cuBLAS falls back to a slower kernel: H100 torch.bmm with
// d_ff = 10922 runs at 272.7 against 398.4 TFLOP/s at 10944 (kernel_gemm.csv, ml-engineering
// SwiGLU sweep; the aligned neighbours 10848-11008 all give 395-398).
constexpr double kUnalignedEfficiency = 272.73 / 398.38;
// Split-K is only worth it while each slice keeps a few K blocks.
constexpr double kMinSplitK = 256;

Precision run_precision(const GpuSpec& gpu, Precision p) {
  if (is_low_precision(p) && gpu.peak(p).si() <= 0) p = Precision::fp8;  // MXFP8 at the FP8 rate
  if (p == Precision::fp8 && gpu.peak(p).si() <= 0) p = Precision::bf16;
  if (p == Precision::bf16 && gpu.peak(p).si() <= 0) p = Precision::fp16;  // V100
  return p;
}

// How a GEMM's tiles are counted. A plain GEMM has exact sizes: ceil(m/tm) tile rows and whole
// waves. A routed grouped GEMM (the experts of one MoE rank) has `groups` GEMMs whose token
// dimension is a random count with mean m: each expert's last tile row is on average half full
// (E[ceil(M/tm)] ≈ M/tm + 1/2 for counts spread over more than a tile) and the group's last wave
// is on average half full (its tile total is random too), so both are expectations, continuous
// in the routing's load imbalance. In wgrad the tokens are the reduction (K) dimension and only
// the waves are random.
struct Tiling {
  double groups = 1;
  bool routed = false;    ///< token counts are random (expected tiles and waves)
  bool tokens_in_m = true;
  GroupedGemmKernel kernel = GroupedGemmKernel::cutlass;
};

double tile_count(double extent, double tile, bool expected) { return expected ? extent / tile + 0.5 : std::ceil(extent / tile); }

double wave_count(double tiles, double sms, bool expected) { return expected ? std::max(1.0, tiles / sms + 0.5) : std::ceil(tiles / sms); }

// Tile-slot FLOP a library pays for C[m,n] += A[m,k]·B[k,n] at its best tiling: output tiles
// spread over the SMs in waves (a partial last wave costs a full one), with split-K when there
// are too few tiles, each tile paying a fixed prologue/epilogue of gemm_k_overhead K steps at
// the BF16 rate (`k_overhead`, already scaled to this precision). Smaller tiles re-read their
// operands more often (traffic per FLOP ∝ 1/tm + 1/tn), charged as the square root of that
// ratio. A 1×1 tile is the ideal machine (the explainer's "no quantization" case).
units::Flop tiled_flop(const GpuSpec& gpu, double m, double n, double k, double k_overhead, const Tiling& g = {}) {
  const double tm0 = std::max(1, gpu.gemm_tile_m), tn0 = std::max(1, gpu.gemm_tile_n);
  const double tiles_m[5] = {tm0, tn0, tm0, std::max(1.0, tm0 / 2), std::max(1.0, tm0 / 2)};
  const double tiles_n[5] = {tn0, tm0, std::max(1.0, tn0 / 2), tn0, std::max(1.0, tn0 / 2)};
  const double base_reuse = 1 / tm0 + 1 / tn0;
  double best = 1e300;
  for (int i = 0; i < 5; ++i) {
    const double tm = tiles_m[i], tn = tiles_n[i];
    const double reuse = std::max(1.0, std::sqrt((1 / tm + 1 / tn) / base_reuse));
    const double tiles = g.groups * tile_count(m, tm, g.routed && g.tokens_in_m) * std::ceil(n / tn);
    for (double split = 1; split <= 16; split *= 2) {
      if (split > 1 && k / split < kMinSplitK) break;
      const double waves = wave_count(tiles * split, gpu.sms, g.routed);
      best = std::min(best, waves * gpu.sms * 2 * tm * tn * (k / split + k_overhead) * reuse);
    }
  }
  return units::Flop(best);
}

struct MainLoop {
  units::FlopPerSecond rate_sm{};  // per SM, of the main loop at this precision
  double k_overhead = 0;  // fixed per-tile cost in K steps at this precision
};

// Per-SM main-loop rate implied by the anchor: the model reproduces the anchor's measured rate
// at its shape (so the anchor's own tiling and waves are accounted for, not credited to the
// main loop), then gemm_shape_fraction takes a typical shape below the search's best.
MainLoop main_loop(const GpuSpec& gpu, Precision run) {
  const bool nvfp4_from_fp8 = run == Precision::nvfp4 && gpu.gemm_anchor_nvfp4.rate.si() <= 0;
  const GemmAnchor& a = run == Precision::nvfp4 && !nvfp4_from_fp8 ? gpu.gemm_anchor_nvfp4
                        : is_low_precision(run) && gpu.gemm_anchor_fp8.rate.si() > 0 ? gpu.gemm_anchor_fp8
                                                                                 : gpu.gemm_anchor;
  const Precision anchor_p = &a == &gpu.gemm_anchor ? run_precision(gpu, Precision::bf16)
                             : &a == &gpu.gemm_anchor_fp8 ? Precision::fp8 : Precision::nvfp4;
  MainLoop ml;
  const units::FlopPerSecond bf16_peak = gpu.peak(run_precision(gpu, Precision::bf16));
  // A fixed time per tile: gemm_k_overhead K steps at the BF16 rate are more K steps at a faster one.
  ml.k_overhead = gpu.gemm_k_overhead * gpu.peak(anchor_p) / bf16_peak;
  if (a.rate.si() <= 0 || a.m <= 0) {
    ml.rate_sm = 0.7 * gpu.peak(run) / gpu.sms;
    return ml;
  }
  const units::Seconds t_anchor = units::Flop(2 * a.m * a.n * a.k) / a.rate;
  ml.rate_sm = std::min(tiled_flop(gpu, a.m, a.n, a.k, ml.k_overhead) / t_anchor, gpu.peak(anchor_p)) / gpu.sms;
  if (anchor_p != run) {  // anchor at another precision (MXFP8 on the FP8 anchor, NVFP4 from FP8)
    const double ratio = gpu.peak(run) / gpu.peak(anchor_p);
    ml.rate_sm *= ratio;
    ml.k_overhead *= ratio;
  }
  ml.rate_sm *= gpu.gemm_shape_fraction * gpu.sustained_clock_ratio * gpu.in_step_rate_ratio *
                gpu.compute_sustained_fraction;
  return ml;
}

// Every GpuSpec field main_loop() reads, and the precision: equal keys give equal main loops.
using MainLoopKey = std::array<double, 7 + 3 * 4 + 9>;
MainLoopKey main_loop_key(const GpuSpec& gpu, Precision run) {
  MainLoopKey key{};
  std::size_t i = 0;
  for (const auto& peak : gpu.peak_flops) key[i++] = peak.si();
  for (const GemmAnchor* a : {&gpu.gemm_anchor, &gpu.gemm_anchor_fp8, &gpu.gemm_anchor_nvfp4})
    for (double v : {a->rate.si(), a->m, a->n, a->k}) key[i++] = v;
  for (double v : {double(gpu.sms), double(gpu.gemm_tile_m), double(gpu.gemm_tile_n), gpu.gemm_k_overhead,
                   gpu.gemm_shape_fraction, gpu.sustained_clock_ratio, gpu.in_step_rate_ratio,
                   gpu.compute_sustained_fraction, double(static_cast<int>(run))})
    key[i++] = v;
  return key;
}

// main_loop() remembered per thread for the last few GPUs and precisions asked (a step prices
// hundreds of GEMMs on one GPU in two or three precisions, and each main loop re-tiles the
// anchor's shape).
MainLoop cached_main_loop(const GpuSpec& gpu, Precision run) {
  thread_local std::array<std::optional<std::pair<MainLoopKey, MainLoop>>, 4> recent;
  thread_local std::size_t next = 0;
  const MainLoopKey key = main_loop_key(gpu, run);
  for (const auto& r : recent)
    if (r && r->first == key) return r->second;
  auto& slot = recent[next++ % recent.size()];
  slot.emplace(key, main_loop(gpu, run));
  return slot->second;
}

bool aligned(double x, Precision p) {
  // 16-byte rows of elements (the block scales live in a separate tensor).
  const PrecisionInfo& i = info(p);
  const double element_bytes = i.scale_block ? i.operand_bytes - 1.0 / i.scale_block : i.operand_bytes;
  return std::fmod(x, std::round(16.0 / element_bytes)) == 0;
}

}  // namespace

double gemm_mainloop_efficiency(const GpuSpec& gpu, Precision p) {
  const Precision run = run_precision(gpu, p);
  return main_loop(gpu, run).rate_sm * gpu.sms / gpu.peak(run);
}

namespace {

// A grouped (MoE expert) GEMM in FP8/MXFP8 runs below the dense low-precision anchor's efficiency,
// where a BF16 grouped GEMM matches its dense anchor (within 15 %, hardware/kernels/
// grouped_gemm_h200.csv): per-group scale handling and the grouped kernel's tiles. FITTED on 8
// kernel rows of two libraries, the geometric mean of measured over modelled: torch.
// _scaled_grouped_mm FP8 rowwise on H200 (fp8_grouped_gemm_h200.csv, 6 forward rows) and torchao's
// CUTLASS MXFP8 grouped GEMM on B200 (kernel_gemm.csv, forward and dgrad). Not fitted on any
// training run: the MoE rows stay out of sample for it.
constexpr double kGroupedLowPrecisionEfficiency = 0.77;

// The routed group's low-precision efficiency relative to the dense low-precision anchor.
// DeepGEMM's contiguous-layout grouped kernel is its dense FP8 kernel over the groups concatenated
// in M (each aligned to the 128-row block): no grouped penalty. Not fitted: checked against
// DeepGEMM's eight contiguous grouped rows on H800 (kernel_gemm.csv, README @a6d97a1c and @55ab91f7) in
// tests/hardware/deepgemm_test.cpp, whose dense rows the anchor model already meets.
double grouped_low_precision_efficiency(GroupedGemmKernel kernel) {
  return kernel == GroupedGemmKernel::deepgemm ? 1.0 : kGroupedLowPrecisionEfficiency;
}

KernelCost tiled_gemm_cost(const GpuSpec& gpu, Precision p, double m, double n, double k, const Tiling& g) {
  if (m <= 0 || n <= 0 || k <= 0) return {units::Seconds{}, Bound::latency, ""};
  const Precision run = run_precision(gpu, p);
  const MainLoop ml = cached_main_loop(gpu, run);
  const units::Seconds compute = tiled_flop(gpu, m, n, k, ml.k_overhead, g) / (ml.rate_sm * gpu.sms);
  const units::Bytes bytes(g.groups * ((m * k + k * n) * gemm_operand_bytes(run) + m * n * storage_bytes(run)));
  const units::Seconds memory = bytes / (gpu.hbm_bandwidth * gpu.hbm_efficiency);
  units::Seconds body = std::max(compute / (g.routed && is_low_precision(run) ? grouped_low_precision_efficiency(g.kernel) : 1.0),
                                 memory);
  // A routed token count is a mean, not a tensor extent: the stacks pad each expert's rows to the
  // alignment (Megatron moe_router_padding_for_fp8, TE Fp8Padding) and only the weight's
  // dimensions decide the kernel's loads.
  const bool m_aligned = (g.routed && g.tokens_in_m) || aligned(m, run);
  const bool k_aligned = (g.routed && !g.tokens_in_m) || aligned(k, run);
  if (!m_aligned || !aligned(n, run) || !k_aligned) body /= kUnalignedEfficiency;
  const Bound b = body < gpu.kernel_gap ? Bound::latency : (compute >= memory ? Bound::compute : Bound::memory);
  return {body + gpu.kernel_gap, b, "MAMF anchor × typical-shape fraction, tile waves, HBM roofline (kernel_gemm.csv)"};
}

}  // namespace

KernelCost gemm_cost(const GpuSpec& gpu, Precision p, double m, double n, double k) {
  return tiled_gemm_cost(gpu, p, m, n, k, Tiling{});
}

KernelCost routed_gemm_cost(const GpuSpec& gpu, Precision p, double groups, double m, double n, double k, bool tokens_in_m,
                            GroupedGemmKernel kernel) {
  return tiled_gemm_cost(gpu, p, m, n, k, Tiling{std::max(1.0, groups), true, tokens_in_m, kernel});
}

KernelCost memory_cost(const GpuSpec& gpu, units::Bytes bytes) {
  if (bytes.si() <= 0) return {units::Seconds{}, Bound::latency, ""};
  // A fixed ramp/tail time plus streaming at the large-tensor bandwidth: small tensors are
  // latency-bound (fit per GPU to the fused rows of kernel_membound.csv, docs/kernels.md).
  const units::Seconds stream = bytes / (gpu.hbm_bandwidth * gpu.hbm_efficiency);
  const units::Seconds body = gpu.memory_latency + stream;
  return {body + gpu.kernel_gap, stream < gpu.memory_latency + gpu.kernel_gap ? Bound::latency : Bound::memory,
          "streaming bandwidth and latency fitted to kernel_membound.csv"};
}

KernelCost attention_cost(const GpuSpec& gpu, Precision p, units::Flop flop, double seq_len,
                          bool backward) {
  if (flop.si() <= 0) return {units::Seconds{}, Bound::latency, ""};
  // The profile's FlashAttention curve, for GPUs with no measured attention rows (V100).
  Precision run_as = (is_low_precision(p) || p == Precision::fp16) ? Precision::bf16 : p;
  if (gpu.peak(run_as).si() <= 0) run_as = Precision::fp16;  // V100: FP16 Tensor Cores only
  const auto& a = gpu.attention;
  const double eff = backward ? a.bwd_max * seq_len / (seq_len + a.bwd_half_seq)
                              : a.fwd_max * seq_len / (seq_len + a.fwd_half_seq);
  const units::Seconds body = flop / (gpu.peak(run_as) * eff * gpu.compute_sustained_fraction * gpu.sustained_clock_ratio *
                                      gpu.in_step_rate_ratio);
  return {body + gpu.kernel_gap, body < gpu.kernel_gap ? Bound::latency : Bound::compute,
          "profile attention curve (no measured rows for this GPU)"};
}

units::FlopPerSecond attention_rate_on(const GpuSpec& gpu, const std::string& data_gpu, units::FlopPerSecond measured) {
  const units::FlopPerSecond data_peak = attention_data_peak(data_gpu);
  if (measured.si() <= 0 || data_peak.si() <= 0) return units::FlopPerSecond{};
  return measured * gpu.peak(run_precision(gpu, Precision::bf16)) / data_peak * gpu.sustained_clock_ratio *
         gpu.in_step_rate_ratio * gpu.compute_sustained_fraction;
}

units::Flop attention_flop(const AttentionShape& s, KernelPass pass) {
  if (s.seq_q <= 0 || s.seq_kv <= 0 || s.heads <= 0) return {};
  // Unmasked (query, key) pairs. Causal with the queries at the end of the keys: query i of Sq
  // sees Skv − Sq + i + 1 keys, ≈ Sq·(Skv − Sq/2); a window w caps each query at w keys.
  const double sq = s.seq_q, skv = s.seq_kv;
  double pairs = sq * skv;
  if (s.causal) pairs = sq * (skv - 0.5 * std::min(sq, skv));
  if (s.window > 0 && s.window < skv) {
    const double w = s.window;
    pairs = s.causal ? sq * w - (sq >= w ? 0.5 * w * w : 0.5 * sq * sq) : std::min(pairs, sq * w);
    pairs = std::max(pairs, 0.0);
  }
  const double fwd = 2.0 * s.batch * s.heads * pairs * (s.head_dim_qk + s.head_dim_v);
  return units::Flop(pass == KernelPass::backward ? 2.5 * fwd : fwd);
}

KernelCost attention_cost(const GpuSpec& gpu, AttentionImpl impl, Precision p, KernelPass pass,
                          const AttentionShape& shape) {
  const units::Flop flop = attention_flop(shape, pass);
  if (flop.si() <= 0) return {units::Seconds{}, Bound::latency, ""};
  const bool bwd = pass == KernelPass::backward;
  if (gpu.attention_data.empty())
    return attention_cost(gpu, p, flop, std::max(shape.seq_q, shape.seq_kv), bwd);
  AttentionQuery q;
  q.backward = bwd;
  q.causal = shape.causal;
  q.head_dim = std::max(1, shape.head_dim_qk);
  q.seq = shape.seq_kv;
  const char* wanted = p == Precision::mxfp8 ? "mxfp8" : is_low_precision(p) ? "fp8" : "bf16";
  // Fallbacks, in order: the requested implementation on each data GPU of the profile (the
  // requested dtype, then BF16: a kernel with no FP8 path runs in BF16), then its materialized
  // twin (unfused <-> sdpa_math), then the profile's default implementation.
  const AttentionImpl twin = impl == AttentionImpl::unfused ? AttentionImpl::sdpa_math
                             : impl == AttentionImpl::sdpa_math ? AttentionImpl::unfused : impl;
  const AttentionImpl tries[3] = {impl, twin, gpu.default_attention};
  for (AttentionImpl t : tries) {
    // Rates rise steeply with length below ~4k (kernels README §1: FA2 H100 causal hd 128 163 at
    // 512, 328 at 16k), so a curve held flat below its first measured length overstates short
    // sequences: a later data GPU whose rows reach down to this length is preferred (h100-sxm's
    // FA2 rows from 512 over H200's from 4k). Above the last length, curves stay flat (§1).
    KernelCost below{};
    for (const auto& d : gpu.attention_data)
      for (const char* dt : {wanted, "bf16"}) {
        q.impl = t;
        q.dtype = dt;
        const char* how = "";
        double first_seq = 0;
        const units::FlopPerSecond rate =
            attention_rate_on(gpu, d, measured_attention_rate(d, q, &how, &first_seq, gpu.attention_data));
        if (rate.si() <= 0) continue;
        const KernelCost c{flop / rate + gpu.kernel_gap, Bound::compute, how};
        if (q.seq >= first_seq) return c;
        if (below.time.si() <= 0) below = c;
      }
    if (below.time.si() > 0) return below;
  }
  return attention_cost(gpu, p, flop, shape.seq_kv, bwd);
}

AttentionImpl default_attention_impl(const GpuSpec& gpu) { return gpu.default_attention; }

}  // namespace clustersim::hardware
