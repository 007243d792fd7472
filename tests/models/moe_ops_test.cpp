#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>

#include "models/mla_ops.hpp"
#include "models/detail/moe_memory.hpp"
#include "models/moe_ops.hpp"
#include "scenarios/load.hpp"
#include "scenarios/load_model.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

hardware::GpuSpec h100() {
  // The profile as a scenario reads it (a dense preset, so the scenario loads).
  return scenarios::load_scenario_string(
             "model: llama3-8b\nhardware: h100-sxm\ncluster: {gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n")
      .gpu;
}

models::TrainingSpec training(int seq_len, int micro_batch, hardware::Precision prec = hardware::Precision::bf16) {
  models::TrainingSpec t;
  t.seq_len = seq_len;
  t.micro_batch = micro_batch;
  t.precision = prec;
  return t;
}

// Busiest rank / mean over `trials` micro-batches of `tokens` tokens per rank on `ep` ranks,
// each token choosing top_k distinct experts uniformly (experts e live on rank e / (E / ep)).
double simulated_imbalance(int experts, int top_k, int ep, int tokens, int trials) {
  std::mt19937_64 rng(12345);
  std::vector<int> ids(std::size_t(experts), 0);
  std::iota(ids.begin(), ids.end(), 0);
  double sum = 0;
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<long> load(std::size_t(ep), 0);
    for (long t = 0; t < long(tokens) * ep; ++t) {
      for (int j = 0; j < top_k; ++j) {  // partial Fisher-Yates: k distinct experts
        std::uniform_int_distribution<int> pick(j, experts - 1);
        std::swap(ids[std::size_t(j)], ids[std::size_t(pick(rng))]);
        ++load[std::size_t(ids[std::size_t(j)] / (experts / ep))];
      }
    }
    sum += double(*std::max_element(load.begin(), load.end())) / (double(tokens) * top_k);
  }
  return sum / trials;
}

}  // namespace

TEST_CASE("auto load imbalance matches simulated uniform top-k routing", "[models][moe]") {
  struct Case { int experts, top_k, ep, tokens; };
  for (const Case c : {Case{64, 4, 16, 256}, Case{8, 2, 8, 512}, Case{128, 8, 4, 128}, Case{32, 1, 32, 64}}) {
    INFO(c.experts << " experts, top-" << c.top_k << ", ep " << c.ep << ", " << c.tokens << " tokens/rank");
    const double simulated = simulated_imbalance(c.experts, c.top_k, c.ep, c.tokens, 200);
    const double estimate = models::auto_load_imbalance(c.experts, c.top_k, c.ep, c.tokens);
    REQUIRE(simulated > 1.01);  // the case exercises imbalance at all
    // The excess over balanced, within 15 % (1.0 or a fixed guess would miss it).
    REQUIRE(estimate - 1 == Approx(simulated - 1).epsilon(0.15));
  }
  REQUIRE(models::auto_load_imbalance(256, 8, 1, 4096) == 1.0);
  REQUIRE(models::auto_load_imbalance(8, 8, 8, 4096) == 1.0);  // every token on every expert
  REQUIRE(models::auto_load_imbalance(256, 8, 64, 512) > models::auto_load_imbalance(256, 8, 8, 512));
  REQUIRE(models::auto_load_imbalance(256, 8, 64, 512) > models::auto_load_imbalance(256, 8, 64, 8192));
}

TEST_CASE("normal quantile matches tabulated values", "[models][moe]") {
  // Abramowitz & Stegun Table 26.5.
  REQUIRE(models::normal_quantile(0.5) == Approx(0.0).margin(1e-9));
  REQUIRE(models::normal_quantile(0.975) == Approx(1.959964).epsilon(1e-6));
  REQUIRE(models::normal_quantile(0.001) == Approx(-3.090232).epsilon(1e-6));
}

TEST_CASE("MoE kernel program: expert GEMM FLOPs are 6 x routed tokens x one expert's weights", "[models][moe]") {
  const auto gpu = h100();
  const auto m = scenarios::model_preset("deepseek-v3");
  models::ParallelSpec p;
  const auto t = training(4096, 1);
  for (int ep : {8, 64}) {
    for (int etp : {1, 2}) {
      INFO("ep " << ep << " etp " << etp);
      const auto ops = models::moe_layer_ops(m, t, p, {ep, etp, 1}, gpu, 1.0);
      REQUIRE(ops.local_experts == 256 / ep);
      // Balanced: every rank processes its tokens' top-k copies; ETP splits each expert.
      const double expert_matmul = 3.0 * m.hidden * m.moe.expert_ffn_hidden;
      REQUIRE(ops.experts_fwd.flop + ops.experts_bwd.flop ==
              Approx(6.0 * 4096 * 8 * expert_matmul).epsilon(1e-9));
      REQUIRE(ops.shared_fwd.flop * 3 == Approx(ops.shared_fwd.flop + ops.shared_bwd.flop).epsilon(1e-9));
      REQUIRE(ops.dispatch_bytes > 0);
    }
  }
}

TEST_CASE("MoE kernel program: small tokens-per-expert GEMMs run less efficiently", "[models][moe]") {
  const auto gpu = h100();
  const auto m = scenarios::model_preset("qwen3-235b-a22b");
  models::ParallelSpec p;
  auto seconds_per_flop = [&](int micro_batch) {
    const auto ops = models::moe_layer_ops(m, training(1024, micro_batch), p, {8, 1, 1}, gpu, 1.0);
    return ops.experts_fwd.time_s / ops.experts_fwd.flop;
  };
  // 1024 tokens × 8 / 16 local experts = 512 tokens per expert against 8192.
  REQUIRE(seconds_per_flop(1) > 1.1 * seconds_per_flop(16));
}

TEST_CASE("MoE all-to-all bytes: none without EP, FP8 dispatch, busiest rank by the imbalance", "[models][moe]") {
  const auto gpu = h100();
  const auto m = scenarios::model_preset("deepseek-v3");
  models::ParallelSpec p;
  const auto t = training(4096, 1);
  const auto single = models::moe_layer_ops(m, t, p, {1, 1, 1}, gpu, 0);
  REQUIRE(single.dispatch_bytes == 0);
  REQUIRE(single.load_imbalance == 1.0);
  const auto bf16 = models::moe_layer_ops(m, t, p, {64, 1, 1}, gpu, 1.25);
  REQUIRE(bf16.dispatch_bytes == Approx(bf16.combine_bytes));
  REQUIRE(bf16.dispatch_bytes_busiest == Approx(1.25 * bf16.dispatch_bytes));
  const auto fp8 = models::moe_layer_ops(m, training(4096, 1, hardware::Precision::fp8), p, {64, 1, 1}, gpu, 1.25);
  REQUIRE(fp8.dispatch_bytes == Approx(0.5 * fp8.combine_bytes));
  // Sequence parallelism: each TP rank routes its own 1/tp of the tokens.
  p.tp = 4, p.sequence_parallel = true;
  REQUIRE(models::moe_layer_ops(m, t, p, {64, 1, 1}, gpu, 1.0).tokens == 1024);
}

TEST_CASE("MoE permute bytes: the flex dispatchers permute only the rows a token sends to each rank", "[models][moe]") {
  const auto gpu = h100();
  const auto m = scenarios::model_preset("qwen3-30b-a3b");  // 128 experts, top-8, hidden 2048
  models::ParallelSpec p;
  auto permute_bytes = [&](models::MoeDispatcher d) {
    auto t = training(4096, 1);
    t.moe_dispatcher = d;
    const auto ops = models::moe_layer_ops(m, t, p, {8, 1, 1}, gpu, 1.0);
    double bytes = 0;
    for (const auto& op : ops.permute_fwd.ops)
      if (op.name == "moe.permute+unpermute") bytes += op.bytes;
    return bytes;
  };
  const double T = 4096, k = 8, row = 2048 * 2.0, received = T * k;
  // alltoall: each token gathered once per expert before the exchange, the received rows sorted
  // by local expert after it; the unpermute mirrors both.
  CHECK(permute_bytes(models::MoeDispatcher::alltoall) == Approx(2 * T * row * (1 + k) + 4 * received * row));
  // DeepEP / HybridEP: the dispatch kernel reads the tokens itself and sends one row per rank a
  // token reaches (8 of 128 experts over 8 ranks: 8·(1 − C(112, 8)/C(128, 8)) ≈ 5.30 ranks); only
  // those rows are spread over the local experts and summed back.
  double miss = 1;
  for (int i = 0; i < 8; ++i) miss *= (112.0 - i) / (128.0 - i);
  const double flex = 2 * (T * 8 * (1 - miss) + received) * row;
  CHECK(permute_bytes(models::MoeDispatcher::deepep) == Approx(flex));
  CHECK(permute_bytes(models::MoeDispatcher::hybridep) == Approx(flex));
  CHECK(flex < 0.6 * permute_bytes(models::MoeDispatcher::alltoall));
}

TEST_CASE("capacity factor caps the busiest rank's load", "[models][moe]") {
  const auto gpu = h100();
  auto m = scenarios::model_preset("mixtral-8x7b");
  models::ParallelSpec p;
  m.moe.capacity_factor = 1.1;
  REQUIRE(models::moe_layer_ops(m, training(4096, 1), p, {8, 1, 1}, gpu, 1.5).load_imbalance == 1.1);
  m.moe.capacity_factor = 0;
  REQUIRE(models::moe_layer_ops(m, training(4096, 1), p, {8, 1, 1}, gpu, 1.5).load_imbalance == 1.5);
}

TEST_CASE("MoE memory: expert states sharded by EP and ETP, ZeRO over expert-DP", "[models][moe]") {
  const auto gpu = h100();
  const auto m = scenarios::model_preset("deepseek-v3");
  const auto pc = models::count_params(m, 4096);
  models::ParallelSpec p;
  p.zero_stage = 1;
  const auto t = training(4096, 1);
  for (int ep : {8, 64}) {
    for (int etp : {1, 4}) {
      const models::ExpertParallel x{ep, etp, 4};
      const auto ops = models::moe_layer_ops(m, t, p, x, gpu, 1.0);
      const auto mem = models::moe_memory(m, t, p, x, m.moe_layer_count(), ops);
      INFO("ep " << ep << " etp " << etp);
      // The ep·etp ranks of one expert-DP replica hold every routed expert once.
      REQUIRE(mem.expert_params * ep * etp == Approx(pc.experts).epsilon(1e-12));
      REQUIRE(mem.expert_weights_bytes == Approx(2 * mem.expert_params));
      REQUIRE(mem.expert_gradients_bytes == Approx(4 * mem.expert_params));
      REQUIRE(mem.expert_optimizer_bytes == Approx(12 * mem.expert_params / 4));  // ZeRO-1 over edp = 4
    }
  }
  // Routed activations and dispatch buffers grow with the micro-batch.
  const models::ExpertParallel x{64, 1, 1};
  auto act = [&](int mb) {
    const auto tt = training(4096, mb);
    return models::moe_memory(m, tt, p, x, 1, models::moe_layer_ops(m, tt, p, x, gpu, 1.0));
  };
  REQUIRE(act(2).routed_activation_bytes == Approx(2 * act(1).routed_activation_bytes));
  REQUIRE(act(2).dispatch_buffer_bytes == Approx(2 * act(1).dispatch_buffer_bytes));
}

TEST_CASE("MoE memory: pipelined ZeRO-2/3 keep expert gradients and weights whole, as the dense ones", "[models][moe]") {
  const auto gpu = h100();
  const auto m = scenarios::model_preset("deepseek-v3");
  const auto t = training(4096, 1);
  const models::ExpertParallel x{8, 1, 8};
  auto mem = [&](int pp, int zero) {
    models::ParallelSpec p;
    p.pp = pp, p.zero_stage = zero;
    return models::moe_memory(m, t, p, x, 1, models::moe_layer_ops(m, t, p, x, gpu, 1.0));
  };
  // pp 1 (FSDP): ZeRO-3 keeps the fp32 shard over edp as the parameter (the optimizer's master:
  // no BF16 copy beside it) and holds two gathered layers' full BF16 weights; ZeRO-2 shards the
  // gradients likewise.
  const auto z1 = mem(1, 1), z3 = mem(1, 3), z2 = mem(1, 2);
  CHECK(z3.weights_sharded);
  CHECK(z3.expert_weights_bytes == 0);
  CHECK(z3.expert_optimizer_bytes == Approx(z1.expert_optimizer_bytes));
  CHECK(z3.gathered_weight_bytes == Approx(2 * z1.expert_weights_bytes));
  CHECK(z2.expert_gradients_bytes == Approx(z1.expert_gradients_bytes / 8));
  CHECK(z2.gathered_gradient_bytes == Approx(2 * z1.expert_gradients_bytes));
  CHECK(z1.gathered_weight_bytes == 0);
  // pp 4: what ParallelSpec says for the dense parameters holds for the experts.
  models::ParallelSpec piped;
  piped.pp = 4;
  REQUIRE(piped.keeps_gathered_params());
  REQUIRE_FALSE(piped.reduces_grads_every_micro_batch());
  const auto p3 = mem(4, 3);
  CHECK_FALSE(p3.weights_sharded);
  CHECK_FALSE(p3.gradients_sharded);
  CHECK(p3.expert_weights_bytes == Approx(mem(4, 1).expert_weights_bytes));
  CHECK(p3.expert_gradients_bytes == Approx(mem(4, 1).expert_gradients_bytes));
  CHECK(p3.expert_optimizer_bytes == Approx(mem(4, 1).expert_optimizer_bytes));  // ZeRO-1's shard
  CHECK(p3.gathered_weight_bytes + p3.gathered_gradient_bytes == 0);
}

TEST_CASE("MLA kernel program: projection FLOPs from the MLA weights, core with the qk and v head widths", "[models][moe]") {
  const auto gpu = h100();
  const auto m = scenarios::model_preset("deepseek-v3");
  const auto pc = models::count_params(m, 4096);
  const auto t = training(4096, 1);
  models::ParallelSpec p;
  const auto one = models::mla_attention_ops(m, t, p, gpu);
  // tp = 1: the projections do 2 FLOP per weight per token forward (weights from count_params,
  // without the two latent RMSNorms), 4 backward.
  const double weights = pc.attention - m.mla.q_lora_rank - m.mla.kv_lora_rank;
  const double core = one.attention_flop_fwd;
  REQUIRE(one.fwd.flop - core == Approx(2.0 * 4096 * weights).epsilon(1e-9));
  REQUIRE(one.bwd.flop - 2.5 * core == Approx(4.0 * 4096 * weights).epsilon(1e-9));
  const double nb = 4096 / 128.0;
  REQUIRE(core == Approx(2.0 * 4096 * 4096 * 128 * (192 + 128) * (nb + 1) / (2 * nb)));
  // TP 8: the up and output projections and the core split 8 ways, the down projections do not.
  p.tp = 8;
  const auto tp8 = models::mla_attention_ops(m, t, p, gpu);
  REQUIRE(tp8.attention_flop_fwd == Approx(core / 8));
  const double down = 2.0 * 4096 * m.hidden * (m.mla.q_lora_rank + m.mla.kv_lora_rank + m.mla.qk_rope_head_dim);
  REQUIRE(tp8.fwd.flop - tp8.attention_flop_fwd == Approx(down + (one.fwd.flop - core - down) / 8).epsilon(1e-9));
}

TEST_CASE("MLA saved activations: per-head Q, K, V split by TP, latents duplicated, up-projection recompute", "[models][moe]") {
  const auto gpu = h100();
  const auto m = scenarios::model_preset("deepseek-v3");
  const auto t = training(4096, 1);
  models::ParallelSpec p;
  const auto one = models::mla_attention_ops(m, t, p, gpu);
  p.tp = 8;
  const auto tp8 = models::mla_attention_ops(m, t, p, gpu);
  const double e = 2, T = 4096;
  const double latents = T * e * (2 * (1536 + 512) + 64);  // before and after the norms, + rope key
  REQUIRE(tp8.saved_bytes - latents == Approx((one.saved_bytes - latents) / 8));
  // Per token without recompute: Q and K at 192 and V, O at 128 per head, 128 heads — far more
  // than the 576-wide latent K/V cache that inference keeps.
  REQUIRE(one.saved_bytes / T > 128 * (192 + 192 + 128 + 128) * e);
  REQUIRE(one.saved_bytes - one.saved_bytes_up_proj_recompute == Approx(T * 128 * (192 + 192 + 128) * e));
}

TEST_CASE("MoE memory: a routed token saves the fc1 input, fc1 output and fc2 input, not the expert output", "[models][moe]") {
  // Megatron-Core TEGroupedMLP (experts.py): the routing probabilities are applied inside the
  // activation (activation_func_with_probs), so backward needs the fc1 input (h), the gated fc1
  // output (2 f) and the fc2 input (f) per routed token; the unpermute only sums. DeepSeek-V3,
  // bf16, no shared-expert or router terms in the difference of two micro-batch sizes' tokens.
  const auto gpu = h100();
  auto m = scenarios::model_preset("deepseek-v3");
  m.moe.shared_experts = 0;
  models::ParallelSpec p;
  const models::ExpertParallel x{64, 1, 1};
  const auto t = training(4096, 1);
  const auto ops = models::moe_layer_ops(m, t, p, x, gpu, 1.0);
  const auto mem = models::moe_memory(m, t, p, x, 1, ops);
  const double router = ops.tokens * m.moe.experts * 4.0;  // fp32 probabilities [T, E]
  const double per_routed_token = (mem.routed_activation_bytes - router) / ops.routed_tokens;
  CHECK(per_routed_token == Approx((7168 + 3 * 2048) * 2.0));
  CHECK(per_routed_token < (2 * 7168 + 3 * 2048) * 2.0);  // the [h] expert output is not kept
}

TEST_CASE("MoE and MLA memory in FP8: linear inputs kept as the 1-B quantized copy (TE), or BF16 (torchao)", "[models][moe]") {
  // A routed token keeps its fc1 input (h) and fc2 input (f) at 1 B and the gated fc1 output
  // (2 f) at 2 B; the shared experts' fc1 adds a 1-B copy of the router's BF16 input.
  const auto gpu = h100();
  auto m = scenarios::model_preset("deepseek-v3");
  models::ParallelSpec p;
  const models::ExpertParallel x{64, 1, 1};
  auto per_routed_token = [&](const models::TrainingSpec& t) {
    const auto ops = models::moe_layer_ops(m, t, p, x, gpu, 1.0);
    const double router = ops.tokens * m.moe.experts * 4.0;
    const double shared = ops.tokens * 2048 * (2 * 2 + t.saved_linear_input_bytes()) +
                          (t.saved_linear_input_bytes() != 2 ? ops.tokens * 7168 * 1.0 : 0.0);
    return (models::moe_memory(m, t, p, x, 1, ops).routed_activation_bytes - router - shared) / ops.routed_tokens;
  };
  auto fp8 = training(4096, 1, hardware::Precision::fp8);
  CHECK(per_routed_token(fp8) == Approx(7168 * 1.0 + 2 * 2048 * 2.0 + 2048 * 1.0));
  fp8.fp8_saves_quantized_inputs = false;
  CHECK(per_routed_token(fp8) == Approx((7168 + 3 * 2048) * 2.0));
  // MLA: each latent kept before its norm (BF16) and as the up projection's input (1 B).
  const auto t8 = training(4096, 1, hardware::Precision::fp8), t16 = training(4096, 1);
  const auto a8 = models::mla_attention_ops(m, t8, p, gpu), a16 = models::mla_attention_ops(m, t16, p, gpu);
  CHECK(a16.saved_bytes - a8.saved_bytes == Approx(4096.0 * (1536 + 512) * 1.0));
}

}}  // namespace CLUSTERSIM_TEST_ID
