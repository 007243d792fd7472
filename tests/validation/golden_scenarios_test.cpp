// Golden tests for every shipped scenario. Each pinned figure has a reason independent of the
// code under test: a published measurement of a comparable run (data/validation/published.csv,
// with its tolerance) or an analytic bound. Other layers are changing the physics, so these pin
// what a correct simulator must satisfy, not today's exact output.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>

#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

scenarios::Report run_shipped(const std::string& name) {
  return scenarios::simulate(
      scenarios::load_scenario_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/" + name + ".yaml"));
}

// Analytic bounds every scenario obeys: the model FLOPs cannot run faster than peak, and the
// plan fits in the GPU's memory (the shipped scenarios are plans people run).
void check_bounds(const scenarios::Report& r) {
  INFO(r.scenario.name << ": step " << r.step_time_s << " s, MFU " << r.mfu << ", memory " << r.memory.total_bytes
                       << " of " << r.memory.capacity_bytes << " B");
  CHECK(r.step_time_s >= r.flops.model * r.tokens_per_step / r.num_gpus / r.peak_flops);
  CHECK(r.memory.fits());
  // Weights and gradients in BF16 alone (2 + 2 bytes per parameter of this rank's shard) are a
  // floor on the memory estimate; routed experts are sharded by ep·etp instead of tp.
  const auto& p = r.scenario.parallel;
  const double experts = r.params.experts;
  CHECK(r.memory.total_bytes >= 2.0 * ((r.params.total - experts) / (p.tp * p.pp) + experts / (p.ep * p.etp * p.pp)));
}

}  // namespace

TEST_CASE("golden: every shipped scenario has a golden test", "[validation][golden]") {
  int shipped = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios"))
    if (e.path().extension() == ".yaml") ++shipped;
  CHECK(shipped == 12);  // a new scenario needs its golden test below
}

TEST_CASE("golden: Llama-2 7B on 256 H100, data parallel", "[validation][golden]") {
  const auto r = run_shipped("7b_256xh100");
  check_bounds(r);
  // Published dense 7-8B BF16 runs on H100: Llama-2-7B under PyTorch FSDP on 96-464 GPUs at
  // 37-45 % MFU (IBMFSDP-002/013/014) and Llama 3.1 8B under NeMo at 58.5-59.4 % (DGXC-L8B-001..005).
  // A data-parallel Megatron-style run lies between the two stacks (5 % tolerance each side).
  CHECK(r.mfu > 0.37 * 0.95);
  CHECK(r.mfu < 0.594 * 1.05);
}

TEST_CASE("golden: Llama-3 70B on 512 H100, TP8 PP4 CP2", "[validation][golden]") {
  const auto r = run_shipped("70b_512xh100_tp8pp4");
  check_bounds(r);
  // Published 70B BF16 runs on H100: PyTorch FSDP 32-38 % MFU (IBMFSDP-008/019/020), Megatron-Core
  // GPT 70B TP8 PP2 42 % (MEG-H100-005), NeMo Llama 3.1 70B TP4 PP4 CP2 53.4-54.1 % (DGXC-L70B).
  CHECK(r.mfu > 0.32 * 0.95);
  CHECK(r.mfu < 0.541 * 1.05);
  // A pipeline of 4 stages with 1F1B and 64 micro-batches per step: the bubble is (pp-1)/(m+pp-1)
  // of the step at most (Narayanan et al. 2021, §2.2), so at least ~95 % of it is not bubble.
  CHECK(r.step.breakdown.bubble_s <= r.step_time_s * 3.0 / (64 + 3) * 1.05);
}

TEST_CASE("golden: GPT-3 175B on 1024 A100, TP8 PP8 interleaved, selective recompute", "[validation][golden]") {
  const auto r = run_shipped("175b_1024xa100");
  check_bounds(r);
  // Korthikanti et al. 2022 Table 5: GPT-3 175B, TP8 PP8, selective recompute on A100 80GB:
  // 51.4 % MFU (KORTH-004). Narayanan et al. SC'21 report 138 TFLOP/s per GPU (44 % of 312, a
  // hardware-FLOP figure with full recompute) at 1024 GPUs. ±5 % around that span.
  CHECK(r.mfu > 0.44 * 0.95);
  CHECK(r.mfu < 0.514 * 1.05);
}

TEST_CASE("golden: the reliability scenario (7B, async checkpoints, unpacked data)", "[validation][golden]") {
  const auto r = run_shipped("7b_256xh100_reliability");
  const auto plain = run_shipped("7b_256xh100");
  check_bounds(r);
  // Its data are half 1024-token and half 4096-token samples, each padded to 4096: useful
  // tokens are (0.5·1024 + 0.5·4096) / 4096 = 0.625 of those processed (analytic).
  CHECK(r.useful_token_fraction == Approx(0.625));
  // Same model, plan and batch as the main scenario: reliability and padding do not change the step.
  CHECK(r.step_time_s == Approx(plain.step_time_s).epsilon(1e-9));
  // Run goodput (padding aside): a failure about every 200 h on 256 GPUs (Llama 3's per-GPU rates,
  // hardware.md §4.1) costs at least the 150 s restart per failure and, with async checkpoints,
  // under 1 % — Llama 3 itself kept > 90 % on 64x more GPUs.
  REQUIRE(r.scenario.reliability.enabled);
  const double run_goodput = r.run.goodput / r.useful_token_fraction;
  INFO("job MTBF " << r.run.job_mtbf_s / 3600 << " h, run goodput " << run_goodput);
  CHECK(r.run.job_mtbf_s / 3600 > 150);
  CHECK(r.run.job_mtbf_s / 3600 < 250);
  CHECK(1 - run_goodput >= 150.0 / r.run.job_mtbf_s * 0.99);
  CHECK(1 - run_goodput < 0.01);
}

TEST_CASE("golden: Llama-3 405B on 16384 H100, the Llama 3 paper's layout", "[validation][golden]") {
  const auto r = run_shipped("405b_16384xh100");
  check_bounds(r);
  // Dubey et al. 2024 Table 4: this layout (TP8 PP16 DP128, 16M-token batches) ran at 41 % BF16
  // MFU; at 8,192 GPUs 43 %, with CP16 at 131k context 38 %. ±5 % around that span.
  CHECK(r.mfu > 0.38 * 0.95);
  CHECK(r.mfu < 0.43 * 1.05);
  // The paper's split: one layer fewer on the first and the last stage (126 = 2·64 − 2 over pp·vpp = 64).
  const auto& split = r.scenario.parallel.pp_layers;
  REQUIRE(split.size() == 64);
  CHECK(split.front() == 1);
  CHECK(split.back() == 1);
  CHECK(std::count(split.begin(), split.end(), 2) == 62);
}

// MoE scenarios: published throughput of the same or a comparable configuration, with the band
// stated; the simulator was not fitted to any of them.
TEST_CASE("golden: Qwen3-235B-A22B on 256 GB200, the Megatron-Bridge recipe", "[validation][golden][moe]") {
  const auto r = run_shipped("qwen3_235b_256xgb200");
  check_bounds(r);
  // Megatron-Bridge 26.06.01 published 7,360 tokens/s/GPU for this recipe (published_moe.csv
  // MOE-MBRIDGE-026, force-balanced routing); the MoE validation target is 15 %.
  CHECK(r.tokens_per_s_per_gpu > 7360 * 0.85);
  CHECK(r.tokens_per_s_per_gpu < 7360 * 1.15);
}

TEST_CASE("golden: DeepSeek-V4-Flash on 128 GB200, Megatron-Bridge's perf recipe", "[validation][golden][moe]") {
  const auto r = run_shipped("deepseek_v4_flash_128xgb200");
  check_bounds(r);
  // Megatron-Bridge published 7,776 tokens/s/GPU (26.08 performance summary, MOE-MBRIDGE-004, held
  // out) and 8,056 on its verification card. The simulation is 31-36 % too fast: the V4 attention,
  // compressor, indexer and mHC kernels of Megatron-Core's dev branch are unmeasured in public
  // (docs/reference/deepseek_v4.md). The band pins that gap (0.85x-1.45x), not agreement.
  CHECK(r.tokens_per_s_per_gpu > 7776 * 0.85);
  CHECK(r.tokens_per_s_per_gpu < 7776 * 1.45);
  // The model FLOPs follow Megatron-Bridge's formula: 731.4 TFLOP/s at 8,056.45 tokens/s on the card.
  CHECK(r.flops.model == Approx(731.4e12 / 8056.45).epsilon(0.01));
}

TEST_CASE("golden: DeepSeek-V3 on 1024 H100, the technical report's layout", "[validation][golden][moe]") {
  const auto r = run_shipped("deepseek_v3_1024xh100");
  check_bounds(r);
  // The report's 180K H800 GPU hours per trillion tokens (1,543 tokens/s/GPU, published_moe.csv
  // MOE-DSREPORT-001) come with DualPipe and FP8 activation caching, which are approximated or not
  // modelled here (docs/moe.md); the simulation reads about three quarters of it (1,133 with the
  // MTP-aware split; 823 before). The band pins that gap (0.4x-1.2x), not agreement.
  CHECK(r.tokens_per_s_per_gpu > 1543 * 0.4);
  CHECK(r.tokens_per_s_per_gpu < 1543 * 1.2);
  // EP64 over 8 nodes: the exchanges cross InfiniBand and part of them stays exposed.
  CHECK(r.step.comm_busy[models::Channel::ep] > 0);
}

TEST_CASE("golden: GPT-OSS-120B on 64 H100, EP64 across 8 nodes", "[validation][golden][moe]") {
  const auto r = run_shipped("gpt_oss_120b_64xh100");
  check_bounds(r);
  // No published H100 run; the Megatron-Bridge GB200 and GB300 runs of this model reach 943-1,081
  // model TFLOP/s per GPU = 19-22 % of their MXFP8 peak (MOE-MBRIDGE-037/038). A BF16 run on H100
  // with every all-to-all crossing InfiniBand is held to 10-35 % of its BF16 peak.
  CHECK(r.mfu > 0.10);
  CHECK(r.mfu < 0.35);
}

TEST_CASE("golden: Nemotron 3 Super on 64 GB200, TP2 EP64, MXFP8 (hybrid Mamba-2 / latent MoE)", "[validation][golden]") {
  const auto r = run_shipped("nemotron3_super_64xgb200");
  check_bounds(r);
  // Megatron-Bridge 26.08 published 7,040 tokens/s/GPU for this layout (MOE-MBRIDGE-015). The
  // simulator predicts this layout too fast with the recipe's CUDA graphs (9,702, +38 %; issue 29's
  // known gap, docs/reference/mamba2_ssd.md; the validation row, whose notes quote no graph scope,
  // runs eager and comes out 14 % slow); the bounds are the published figure less 15 % and
  // twice it, so a change that loses the Mamba or MoE layers' time, or doubles it, fails here.
  CHECK(r.tokens_per_s_per_gpu > 7040 * 0.85);
  CHECK(r.tokens_per_s_per_gpu < 7040 * 2.0);
  // 40 Mamba-2, 40 latent-MoE and 8 attention layers (+ the MTP module): ~12.7 B active parameters,
  // 6·N plus the attention and SSD scans ≈ 82-85 GFLOP per token (the published 831 TFLOP/s at
  // 9,856 tokens/s on GB300 is 84.3).
  CHECK(r.flops.model > 80e9);
  CHECK(r.flops.model < 86e9);
}

TEST_CASE("golden: Qwen3-Next-80B-A3B on 64 H100, EP64 (gated DeltaNet / attention hybrid MoE)", "[validation][golden][linear]") {
  const auto r = run_shipped("qwen3_next_80b_64xh100");
  check_bounds(r);
  // No published training run of this model. The FLOPs per token by hand: 6 × 3.46 B active matmul
  // weights (LM head included) = 20.8 G; 12 attention layers × 3 × 2·4096·16·(256+256) = 2.4 G;
  // 36 gated DeltaNet layers × 3 × 5.85 M (models::delta_rule_flop_per_token) = 0.63 G: 23.8 G.
  CHECK(r.flops.model > 23.3e9);
  CHECK(r.flops.model < 24.3e9);
  // EP64 over 8 nodes with top-10 routing: the all-to-alls cross InfiniBand, exposed (no overlap).
  CHECK(r.step.comm_busy[models::Channel::ep] > 0.3 * r.step_time_s);
}

TEST_CASE("golden: DeepSeek-V3 on 2048 H800 as its report trained it, batch ramp included", "[validation][golden][ramp]") {
  const auto sc = scenarios::load_scenario_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/deepseek_v3_2048xh800_ramp.yaml");
  const auto r = scenarios::simulate(sc);
  check_bounds(r);
  // The report (arXiv 2412.19437 Table 1): 2.664M H800 GPU-hours of pre-training, 54.2 days on
  // 2,048 GPUs, a whole-run figure with its restarts. The scenario runs DualPipe as dualpipev,
  // without node-limited routing; issue 29's bound: within 15 % of the report's days. A run that
  // ran must fit (issue 28).
  const double report_days = 2.664e6 / 2048 / 24;
  CHECK(r.days_to_train > report_days * 0.85);
  CHECK(r.days_to_train < report_days * 1.15);
  CHECK(r.memory.fits());
  // The ramp's 469B tokens at batches 3072-15360 take longer than at the full batch.
  auto flat = sc;
  flat.training.batch_ramp = {};
  CHECK(r.days_to_train_ideal > scenarios::simulate(flat).days_to_train_ideal);
}

}}  // namespace CLUSTERSIM_TEST_ID
