// Issue 28: published MoE A/B pairs as test oracles. Each pair is one job measured twice with one
// setting changed (data/validation/moe_host_overhead.csv, copied from the reference data with its
// sources: Megatron-Bridge @067f987d model verification card and skills for Qwen3-30B-A3B on 16
// H100, Megatron-LM PR #5728 for GB200, Megatron-Bridge PR #3561 for GPT-OSS on GB200 and issue
// #4439 for B200). The predicted ratio of the two step times must be within 10 % of the measured
// one; one pair is a listed gap (GPT-OSS MXFP8 / BF16, the last test case). Not a pair here:
// natural routing on real data against forced balance (30.290 / 24.714 s = 1.226 on the card),
// which no scenario key expresses; auto is the sampling floor of balanced routing, and a trained
// router's persistent skew is given as moe_load_imbalance measured from router logs. What the
// model does with such a skew is checked by the routing test case below.
#include <catch2/catch.hpp>

#include <cstdio>
#include <functional>

#include <string>
#include <vector>

#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

// Qwen3-30B-A3B, 16 H100 (2 nodes), TP1 PP1 EP16, MBS1 GBS1024, seq 4096, BF16, forced balance
// (random router logits: auto), HybridEP on 32 SMs with permute fusion, TE graphs moe_router+moe_preprocess,
// EP overlap on: the card's canonical perf recipe (20.147 s).
const char* kQwen30bH100 = R"(name: Qwen3-30B-A3B on 16x H100, Megatron-Bridge verification card
model: qwen3-30b-a3b
hardware: h100-sxm
cluster: {gpus: 16}
parallelism: {tp: 1, pp: 1, ep: 16, zero_stage: 1}
training:
  seq_len: 4096
  global_batch: 1024
  micro_batch: 1
  precision: bf16
  recompute: none
  moe_dispatcher: deepep
  moe_dispatcher_sms: 32
  moe_load_imbalance: auto
  moe_a2a_overlap: true
  moe_permute_fusion: true
  moe_router_fusion: true
  cuda_graph_scope: [moe_router, moe_preprocess]
)";

// The alltoall dispatcher as the smoke runs had it: no fusion, no overlap.
const std::vector<std::string> kAlltoall = {"training.moe_dispatcher_sms=null", "training.moe_dispatcher=alltoall",
                                            "training.moe_a2a_overlap=false", "training.moe_permute_fusion=false",
                                            "training.moe_router_fusion=false"};

// Qwen3-30B-A3B, 16 GB200, TP1 PP1 EP16, MBS4 GBS512, MXFP8, HybridEP (Megatron-LM moe_recipes
// README and PR #5728).
std::string qwen30b_gb200() {
  std::string y = kQwen30bH100;
  auto swap = [&](const std::string& a, const std::string& b) { y.replace(y.find(a), a.size(), b); };
  swap("hardware: h100-sxm", "hardware: gb200");
  swap("global_batch: 1024", "global_batch: 512");
  swap("micro_batch: 1", "micro_batch: 4");
  swap("precision: bf16", "precision: mxfp8");
  swap("moe_a2a_overlap: true", "moe_a2a_overlap: false");
  return y;
}

// Qwen3-30B-A3B on one DGX B200, Megatron-Bridge's B200 MXFP8 V1 recipe as issue #4439 ran it.
std::string qwen30b_b200() {
  std::string y = qwen30b_gb200();
  auto swap = [&](const std::string& a, const std::string& b) { y.replace(y.find(a), a.size(), b); };
  swap("hardware: gb200", "hardware: b200");
  swap("{gpus: 16}", "{gpus: 8}");
  swap("ep: 16", "ep: 8");
  swap("cuda_graph_scope: [moe_router, moe_preprocess]", "cuda_graph_scope: [attn, moe_router, moe_preprocess]");
  return y;
}

// GPT-OSS-120B on 64 GB200, Megatron-Bridge's GB200 V2 base config (PR #3561): EP64, MBS4,
// GBS1280, seq 4096, selective recompute of layernorm and moe_act, EP overlap on, no graphs, the
// alltoall dispatcher (the PR's new default).
const char* kGptOssGb200 = R"(name: GPT-OSS-120B on 64x GB200, Megatron-Bridge PR 3561
model: gpt-oss-120b
hardware: gb200
cluster: {gpus: 64}
parallelism: {tp: 1, pp: 1, ep: 64, zero_stage: 1}
training:
  seq_len: 4096
  global_batch: 1280
  micro_batch: 4
  precision: bf16
  grad_reduce_dtype: bf16
  recompute: selective
  recompute_modules: [layernorm, moe_act]
  moe_dispatcher: alltoall
  moe_a2a_overlap: true
  moe_load_imbalance: auto
  moe_router_fusion: true
  moe_permute_fusion: true
  cross_entropy: fused
)";
std::string gpt_oss_gb200() { return kGptOssGb200; }

double step_s(const std::string& yaml, std::vector<std::string> sets = {}) {
  return testing::run_text(yaml, sets).step_time_s;
}

struct Pair {
  const char* what;
  double measured;   ///< step time of B over step time of A
  double predicted;
};

void report(const Pair& p) {
  std::printf("  %-72s measured %.3f  predicted %.3f  (%+.1f %%)\n", p.what, p.measured, p.predicted,
              100 * (p.predicted / p.measured - 1));
}

}  // namespace

TEST_CASE("MoE A/B pairs: predicted step-time ratios within 10 % of the measured ones", "[validation][moe][ab]") {
  const double canonical = step_s(kQwen30bH100);
  const double no_overlap = step_s(kQwen30bH100, {"training.moe_a2a_overlap=false"});
  std::vector<std::string> eager = kAlltoall;
  eager.push_back("training.cuda_graph_scope=[]");
  std::vector<std::string> graphed = kAlltoall;
  graphed.push_back("training.cuda_graph_scope=[attn, moe_router, moe_preprocess]");
  const double alltoall_eager = step_s(kQwen30bH100, eager);
  const double alltoall_graphs = step_s(kQwen30bH100, graphed);
  std::vector<Pair> pairs = {
      // skills/nemo-mbridge-perf-moe-comm-overlap: 24.714 s off, 20.147 s on (card recipe).
      {"EP A2A overlap off / on (HybridEP, forced balance, 16 H100)", 24.714 / 20.147, no_overlap / canonical},
      // the alltoall smoke (41.36 s, eager, no fusion, overlap off) against HybridEP with overlap off.
      {"alltoall (eager, unfused) / HybridEP (fused, graphed), overlap off", 41.36 / 24.714, alltoall_eager / no_overlap},
      // skills/nemo-mbridge-perf-cuda-graphs: alltoall EP16, TE graphs attn+router+preprocess 42.00 s vs eager 41.36 s.
      {"alltoall: TE graphs attn+moe_router+moe_preprocess / eager", 42.00 / 41.36, alltoall_graphs / alltoall_eager},
  };
  // FP8 blockwise over BF16 for Qwen3-30B-A3B on 32 H100 (TP1 PP1 EP8, MBS1 GBS256, HybridEP,
  // graphs router+preprocess; Megatron-LM moe_recipes README | PR #5728): 234.1 | 240.5 TFLOP/s
  // BF16 against 232.4 | 242.9 FP8, step ratio fp8/bf16 = 0.999 (mean of both). A listed gap
  // (predicted 0.887) until the host cost of a TE module call (2.7 plain ops, host_op_cost.csv):
  // FP8's quantize kernels and TE calls make the small-expert layer host-bound at MBS 1.
  std::string h32 = kQwen30bH100;
  h32.replace(h32.find("{gpus: 16}"), 10, "{gpus: 32}");
  h32.replace(h32.find("ep: 16"), 6, "ep: 8");
  h32.replace(h32.find("global_batch: 1024"), 18, "global_batch: 256");
  h32.replace(h32.find("moe_a2a_overlap: true"), 21, "moe_a2a_overlap: false");
  const double bf16 = step_s(h32), fp8 = step_s(h32, {"training.precision=fp8", "training.fp8_recipe=blockwise"});
  pairs.push_back({"H100: FP8 blockwise / BF16, small experts (Qwen3-30B-A3B)", (234.1 / 232.4 + 240.5 / 242.9) / 2,
                   fp8 / bf16});
  // Full-iteration CUDA graphs (paged stash) over partial router+preprocess graphs, GB200:
  // 598.1 / 480.3 TFLOP/s (PR #5728) = 1.245. Out of sample: the dispatch call's host time comes
  // from the H100 profile above, scaled to Grace by its plain-op cost (host_op_cost.csv). A
  // listed gap (predicted 1.073) until that call was costed.
  const std::string gb = qwen30b_gb200();
  pairs.push_back({"GB200: partial graphs / full-iteration graphs", 598.1 / 480.3,
                   step_s(gb) / step_s(gb, {"training.cuda_graph_scope=[full_iteration]"})});
  // MXFP8 over BF16 for Qwen3-30B-A3B on one DGX B200 (EP8, MBS4, HybridEP, partial graphs;
  // Megatron-Bridge issue #4439, a user's 100-iteration run): ~562 / ~552 TFLOP/s.
  const std::string b200 = qwen30b_b200();
  pairs.push_back({"B200: BF16 / MXFP8, small experts (Qwen3-30B-A3B, partial graphs)", 562.0 / 552.0,
                   step_s(b200, {"training.precision=bf16"}) / step_s(b200)});
  // GPT-OSS-120B on 64 GB200 (Megatron-Bridge PR #3561): alltoall 423.6 against HybridEP 406.6
  // TFLOP/s in BF16.
  const std::string oss = gpt_oss_gb200();
  pairs.push_back({"GB200 GPT-OSS-120B BF16: HybridEP / alltoall", 423.6 / 406.6,
                   step_s(oss, {"training.moe_dispatcher=deepep", "training.moe_dispatcher_sms=32"}) / step_s(oss)});
  std::printf("MoE A/B pairs (data/validation/moe_host_overhead.csv):\n");
  for (const Pair& p : pairs) {
    report(p);
    INFO(p.what << ": measured " << p.measured << ", predicted " << p.predicted);
    CHECK(p.predicted / p.measured == Approx(1.0).epsilon(0.10));
  }
  // The card's steps themselves: 20.147 s (overlap on) and 24.714 s (off) measured. Not out of
  // sample: the dispatch call's host time (models/detail/moe_host.cpp [N]) is read from the
  // same Nsight profile as the overlap-off run.
  std::printf(
      "  canonical recipe step: measured 20.147 s, predicted %.3f s; overlap off: measured 24.714 s, "
      "predicted %.3f s\n",
      canonical, no_overlap);
  CHECK(canonical == Approx(20.147).epsilon(0.10));
  CHECK(no_overlap == Approx(24.714).epsilon(0.10));
}

// The Megatron-LM guide "Optimizing DeepSeek-V3 Training Performance on NVIDIA GB200 NVL72" (§3
// table, data/validation/moe_host_overhead.csv): one job (256 GB200, TP1 PP8 VPP4 EP32, MBS1
// GBS2048, MXFP8) measured after each optimisation, in order. Four consecutive steps change only
// what scenario keys express; the job at each step is the external run
// tests/external/mcore_dsv3_256xgb200_baseline.yaml with the changes so far.
double guide_step_s(const std::vector<std::string>& sets) {
  return scenarios::simulate(
             scenarios::load_scenario_file(
                 std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/external/mcore_dsv3_256xgb200_baseline.yaml", sets))
      .step_time_s;
}

TEST_CASE("MoE A/B pairs: the DeepSeek-V3 GB200 guide's steps that scenario keys express", "[validation][moe][ab]") {
  const std::vector<std::vector<std::string>> steps = {
      {"training.moe_router_fusion=true"},                                   // §2.1.4, --moe-router-fusion
      {"training.moe_dispatcher=deepep", "training.moe_dispatcher_sms=24"},  // §2.2.1: DeepEP on 24 SMs
      {"training.recompute_modules=[mlp, moe_act]"},                         // §2.2.2: up_proj recompute off
      {"training.cuda_graph_scope=[attn, moe_router, moe_preprocess]"},      // §2.3
  };
  std::vector<std::string> at;
  std::vector<double> step = {guide_step_s(at)};  // the baseline, then after each step
  for (const auto& change : steps) {
    at.insert(at.end(), change.begin(), change.end());
    step.push_back(guide_step_s(at));
  }
  // TFLOP/s/GPU before / after each step = the step-time ratio (same job, same FLOP count).
  const std::vector<Pair> pairs = {
      {"GB200 DeepSeek-V3 guide: router unfused / fused", 540.00 / 529.55, step[0] / step[1]},
      {"GB200 DeepSeek-V3 guide: recompute mlp+up_proj / mlp+moe_act", 610.71 / 566.07, step[2] / step[3]},
      {"GB200 DeepSeek-V3 guide: eager / graphs attn+moe_router+moe_preprocess", 663.27 / 610.71, step[3] / step[4]},
  };
  std::printf("MoE A/B pairs, DeepSeek-V3 GB200 guide (data/validation/moe_host_overhead.csv):\n");
  for (const Pair& p : pairs) {
    report(p);
    INFO(p.what << ": measured " << p.measured << ", predicted " << p.predicted);
    CHECK(p.predicted / p.measured == Approx(1.0).epsilon(0.10));
  }
  // A listed gap: the four steps together, 663.27 / 529.55 = 1.25 measured, are predicted ~1.11.
  // Each step passes alone, but the errors do not cancel: the router fusion is predicted +8.7 %
  // (measured +2.0 %: its 41 fewer forward kernels save 41 plain ops of Grace CPU, 1.5 ms per layer
  // forward, in a forward the model has host-bound before the sync), and the graphs +0.0 %
  // (measured +8.6 %, 2.2 ms per layer and micro-batch: once the router is fused the model's CPU
  // runs ahead of everything before the tokens-per-expert sync). The guide's timeline of this
  // stage is host-bound throughout ("large gaps between kernels", §2), so its framework calls
  // (TE modules, attention) cost the host more, and its small router kernels less, than one
  // per-op cost measured on a torch Linear (host_op_cost.csv, TE #2053) says. The guide's
  // later CPU-side steps (NUMA binding +10 %, TE host clean-ups) are not scenario keys.
  const Pair all{"GB200 DeepSeek-V3 guide: the four steps together", 663.27 / 529.55, step[0] / step[4]};
  report(all);
  INFO(all.what << ": measured " << all.measured << ", predicted " << all.predicted);
  CHECK(all.predicted / all.measured < 0.90);
  // A listed gap since DeepEP runs at its measured kernel rate (hardware/kernels/ep_kernels.csv):
  // untuned on 24 SMs over EP32 in one NVL72 domain its combine moves 164 GB/s (DeepEP's GB200
  // table, 24 ranks; the guide measured 400 GB/s dispatch and 190 GB/s combine for this job,
  // §2.2.1), a third of the link rate NCCL's all-to-all gets, so the model has the switch lose
  // about 17 %. The guide measured +4.8 %: what DeepEP removed from the alltoall path (its
  // host syncs and per-expert splits, on Grace) outweighed the slower kernels, which the host
  // model under-counts, as in the four steps together above.
  const Pair deepep{"GB200 DeepSeek-V3 guide: alltoall / DeepEP (24 SMs)", 566.07 / 540.00, step[1] / step[2]};
  report(deepep);
  INFO(deepep.what << ": measured " << deepep.measured << ", predicted " << deepep.predicted);
  CHECK(deepep.predicted / deepep.measured < 0.90);
}

// A listed gap: the pair is checked to stay more than 10 % off, so closing it fails here and moves
// the pair up. GPT-OSS-120B on 64 GB200 (PR #3561): MXFP8 438.5 against BF16 423.6 TFLOP/s with
// alltoall, a step ratio of 1.035; predicted ~1.15. The same job is predicted ~1.6x too fast in
// both precisions (MOE-MBRIDGE-062: +59 %), so about 2 s per step of precision-independent time
// is missing for this model: not the GEMMs (MXFP8 barely moves the measured step), and not a
// published component (docs/moe.md, "GPT-OSS").
TEST_CASE("MoE A/B pairs: the GPT-OSS MXFP8 / BF16 pair stays a listed gap", "[validation][moe][ab]") {
  const std::string oss = gpt_oss_gb200();
  const Pair p{"GB200 GPT-OSS-120B alltoall: BF16 / MXFP8", 438.5 / 423.6,
               step_s(oss) / step_s(oss, {"training.precision=mxfp8"})};
  report(p);
  INFO(p.what << ": measured " << p.measured << ", predicted " << p.predicted);
  CHECK(p.predicted / p.measured > 1.10);
}

// Natural (trained-router) routing against forced balance, Megatron-Core's MoE model zoo: one
// Qwen3-235B job at four sequence lengths (data/validation/moe_host_overhead.csv). Tokens per rank
// and micro-batch stay 4,096, so the busiest rank's skew is the same at every length; only the MoE
// share of the step shrinks. The skew is read from the 16k pair (the moe_load_imbalance that
// reproduces it), then the other three lengths are predicted with it, and so is the Megatron-Bridge
// card's Qwen3-30B-A3B pair (another model, EP16, early training). It fails if the imbalance
// touched the wrong part of the step (the attention, the whole step) or scaled with the length.
namespace {
// The zoo job at k thousand tokens: CP grows with the length (16k: CP 1 ... 128k: CP 8).
double zoo_step_s(int k, const std::vector<std::string>& sets) {
  const int cp = k / 16;
  return scenarios::simulate(
             scenarios::load_scenario_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/external/qwen3_235b_256xh100_" +
                                               std::to_string(k) + "k_cp" + std::to_string(cp) + ".yaml",
                                           sets))
      .step_time_s;
}
double skew_ratio(const std::function<double(const std::vector<std::string>&)>& step, double skew) {
  return step({"training.moe_load_imbalance=" + std::to_string(skew)}) / step({});
}
}  // namespace

TEST_CASE("MoE A/B pairs: a trained router's skew read at one length predicts the others", "[validation][moe][ab]") {
  const std::vector<std::pair<int, double>> measured = {
      {16, 295.0 / 237}, {32, 335.0 / 277}, {64, 368.0 / 320}, {128, 389.0 / 357}};
  auto at = [](int k) { return [k](const std::vector<std::string>& sets) { return zoo_step_s(k, sets); }; };
  // The skew that reproduces the 16k pair: the ratio grows with it, so bisect.
  double lo = 1.0, hi = 3.0;
  for (int i = 0; i < 20; ++i) {
    const double mid = (lo + hi) / 2;
    (skew_ratio(at(16), mid) < measured[0].second ? lo : hi) = mid;
  }
  const double skew = (lo + hi) / 2;
  std::printf(
      "MoE A/B pairs, natural routing / forced balance (model zoo Qwen3-235B, 256 H100; skew read at 16k: %.3f):\n",
      skew);
  CHECK(skew > 1.2);  // a trained router is well off the sampling floor
  for (std::size_t i = 1; i < measured.size(); ++i) {
    const auto& [k, ratio] = measured[i];
    const Pair p{"", ratio, skew_ratio(at(k), skew)};
    std::printf("  %3dk tokens, CP %-3d%52s measured %.3f  predicted %.3f  (%+.1f %%)\n", k, k / 16, "", p.measured,
                p.predicted, 100 * (p.predicted / p.measured - 1));
    INFO(k << "k: measured " << p.measured << ", predicted " << p.predicted);
    CHECK(p.predicted / p.measured == Approx(1.0).epsilon(0.05));
  }
  // The card's pair (overlap off, as its natural-routing run): Qwen3-30B-A3B on 16 H100.
  const std::string off = "training.moe_a2a_overlap=false";
  const Pair p{
      "Qwen3-30B-A3B, 16 H100 (Megatron-Bridge card), natural / forced, the zoo's skew", 30.290 / 24.714,
      step_s(kQwen30bH100, {off, "training.moe_load_imbalance=" + std::to_string(skew)}) / step_s(kQwen30bH100, {off})};
  report(p);
  CHECK(p.predicted / p.measured == Approx(1.0).epsilon(0.10));
}
}}  // namespace CLUSTERSIM_TEST_ID
