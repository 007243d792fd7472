// Linear-attention layers (gated DeltaNet, KDA): FLOPs against a hand computation of the chunked
// gated delta rule, parameters against the HF checkpoints' tensor shapes and model cards, the
// model.linear_attention keys and their errors, a Qwen3-Next step end to end.
#include <catch2/catch.hpp>

#include "models/flops.hpp"
#include "models/linear_attention_ops.hpp"
#include "models/memory.hpp"
#include "scenarios/error.hpp"
#include "scenarios/explain.hpp"
#include "scenarios/load_model.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

std::string load_error(const std::string& model, const std::string& parallel = "") {
  try {
    scenarios::load_scenario_string("name: t\nmodel: " + model + "\nhardware: h100-sxm\ncluster: {gpus: 8}\n" + parallel +
                                        "training: {seq_len: 2048, global_batch: 8}\n",
                                    "m.yaml");
  } catch (const scenarios::ScenarioError& e) {
    return e.what();
  }
  return "";
}

const char* kBase = "{layers: 4, hidden: 1024, heads: 8, ffn_hidden: 4096, vocab: 1000, activation: swiglu, norm: rmsnorm";
const char* kLinear = "linear_attention: {kind: gated_deltanet, heads: 16, key_heads: 8, head_dim: 64}";

}  // namespace

TEST_CASE("gated delta rule FLOPs per token match the chunked WY algorithm computed by hand", "[models][linear]") {
  // Qwen3-Next: 32 value heads, d_k = d_v = 128, chunk C = 64. Per head and token:
  // K·Kᵀ 2·64·128 = 16,384; the triangular solve 2·64²/3 = 2,730.67; W and U 2·64·128 ·2 =
  // 32,768; the state pass 2·2·128·128 = 65,536; the output Q·S 2·128·128 = 32,768, Q·Kᵀ
  // 2·64·128 = 16,384, (QKᵀ)·V' 2·64·128 = 16,384. Sum 182,954.67, ×32 heads = 5,854,549.3.
  const auto m = scenarios::model_preset("qwen3-next-80b-a3b");
  const double per_head = 16384.0 + 2 * 64.0 * 64.0 / 3 + 32768.0 + 65536.0 + 32768.0 + 16384.0 + 16384.0;
  CHECK(models::delta_rule_flop_per_token(m.linear_attention) == Approx(32 * per_head));
  models::TrainingSpec t;
  t.seq_len = 4096, t.micro_batch = 2, t.precision = hardware::Precision::bf16;
  models::ParallelSpec p;
  const auto gpu = scenarios::load_scenario_string("name: t\nmodel: qwen3-next-80b-a3b\nhardware: h100-sxm\ncluster: {gpus: 8}\n"
                                                   "parallelism: {ep: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n",
                                                   "m.yaml")
                       .gpu;
  const models::MambaOps o = models::linear_attention_ops(m, t, p, gpu);
  const double tokens = 8192;
  // The forward kernels' tensor-core work is exactly the formula (the norms and cumsum add none).
  CHECK(o.core_fwd.flop == Approx(tokens * 32 * per_head));
  CHECK(o.scan_flop_fwd == Approx(tokens * 32 * per_head));
  // in_proj_qkvz [12288, 2048] and in_proj_ba [64, 2048] of the HF checkpoint, one fused GEMM.
  CHECK(o.in_fwd.flop == Approx(2 * tokens * (12288.0 + 64) * 2048));
  CHECK(o.out_fwd.flop == Approx(2 * tokens * 4096.0 * 2048));
  CHECK(o.core_bwd.flop > 1.5 * o.core_fwd.flop);
  // TP 2 halves the rank's heads, hence its scan work.
  p.tp = 2;
  CHECK(models::linear_attention_ops(m, t, p, gpu).core_fwd.flop == Approx(o.core_fwd.flop / 2));
  // The model FLOPs count 3× the scan per linear layer (36 of 48 layers): halving the chunk to
  // 32 removes 2·ΔC·(3K + 2V) + 2·(64² − 32²)/3 per head and token.
  auto half = m;
  half.linear_attention.chunk = 32;
  const double saved = 2 * 32.0 * (3 * 128 + 2 * 128) + 2 * (64.0 * 64 - 32.0 * 32) / 3;
  CHECK(models::flops_per_token(m, t).model - models::flops_per_token(half, t).model == Approx(3 * 36 * 32 * saved));
}

TEST_CASE("linear-attention parameters and the Qwen3-Next / Kimi Linear presets match their checkpoints and cards", "[models][linear]") {
  const auto q = scenarios::model_preset("qwen3-next-80b-a3b");
  // in_proj_qkvz 2048·12288, in_proj_ba 2048·64, conv1d 8192·4 (no bias), A_log and dt_bias 32
  // each, the gated norm 128, out_proj 4096·2048.
  CHECK(models::linear_attention_params(q) == Approx(2048.0 * 12288 + 2048.0 * 64 + 8192.0 * 4 + 64 + 128 + 4096.0 * 2048));
  CHECK(q.mixer_count(models::Mixer::linear) == 36);
  CHECK(q.layer_kind(3).mixer == models::Mixer::attention);
  // Model card: 80B total, 3B activated (without the embedding and the head, 0.6B more).
  const auto pq = models::count_params(q, 4096);
  CHECK(pq.total == Approx(80e9).epsilon(0.03));
  CHECK(pq.active - pq.embedding - pq.lm_head == Approx(3.0e9).epsilon(0.1));
  const auto k = scenarios::model_preset("kimi-linear-48b-a3b");
  // q, k, v 3·2304·4096, b_proj 2304·32, f_a and g_a 2·2304·128, f_b and g_b 2·128·4096, the
  // short convs 3·4096·4, A_log 32, dt_bias 4096, o_norm 128, o_proj 4096·2304.
  CHECK(models::linear_attention_params(k) == Approx(3 * 2304.0 * 4096 + 2304.0 * 32 + 2 * 2304.0 * 128 + 2 * 128.0 * 4096 +
                                                     3 * 4096.0 * 4 + 32 + 4096 + 128 + 4096.0 * 2304));
  CHECK(k.mixer_count(models::Mixer::linear) == 20);
  CHECK(k.mixer_count(models::Mixer::attention) == 7);
  CHECK(k.layer_kind(0).mlp == models::MlpKind::dense);
  // Tech report: 48B total, 3B activated (the count here: 2.7B without the embedding and the
  // head, 3.5B with them; the report rounds).
  const auto pk = models::count_params(k, 4096);
  CHECK(pk.total == Approx(48e9).epsilon(0.04));
  CHECK(pk.active - pk.embedding - pk.lm_head > 2.5e9);
  CHECK(pk.active < 3.6e9);
}

TEST_CASE("The Granite-4.0-H-Small preset (Mamba-2 and MoE in every layer) has its card's sizes", "[models][mamba]") {
  // Model card: 32B total, 9B active; 36 Mamba-2 and 4 attention layers, each with an MoE MLP.
  const auto g = scenarios::model_preset("granite-4.0-h-small");
  CHECK(g.mixer_count(models::Mixer::mamba) == 36);
  CHECK(g.moe_layer_count() == 40);
  const auto pg = models::count_params(g, 4096);
  CHECK(pg.total == Approx(32e9).epsilon(0.03));
  CHECK(pg.active == Approx(9e9).epsilon(0.1));
}

TEST_CASE("model.linear_attention: inconsistent values are errors naming the key", "[scenarios][linear]") {
  const std::string b = kBase, la = kLinear;
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {b + ", layer_pattern: [linear+mlp, attention+mlp, linear+mlp, attention+mlp]}", {"model.layer_pattern", "model.linear_attention is not given"}},
      {b + ", " + la + ", layer_pattern: \"*-*-\"}", {"model.linear_attention", "no linear-attention layer"}},
      {b + ", " + la + "}", {"model.linear_attention", "needs model.layer_pattern"}},
      {b + ", linear_attention: {kind: gated_deltanet, heads: 16, key_heads: 6}, layer_pattern: [linear, mlp, linear, mlp]}",
       {"model.linear_attention.key_heads", "multiple of key_heads"}},
      {b + ", linear_attention: {kind: kda, heads: 16, key_heads: 8}, layer_pattern: [linear, mlp, linear, mlp]}",
       {"model.linear_attention.key_heads", "kda"}},
      {b + ", linear_attention: {kind: mamba3, heads: 16}, layer_pattern: [linear, mlp, linear, mlp]}",
       {"model.linear_attention.kind", "gated_deltanet"}},
      {b + ", linear_attention: {kind: kda}, layer_pattern: [linear, mlp, linear, mlp]}", {"model.linear_attention.heads", "is required"}},
      {b + ", linear_attention: {kind: kda, heads: 16, state: 4}, layer_pattern: [linear, mlp, linear, mlp]}",
       {"model.linear_attention", "state"}},
  };
  for (const auto& [model, needles] : cases) {
    INFO(model);
    const std::string e = load_error(model);
    for (const auto& n : needles) CHECK(e.find(n) != std::string::npos);
  }
  const std::string ok = b + ", " + la + ", layer_pattern: {every: 2, layer: attention+mlp, others: linear+mlp}}";
  CHECK(load_error(ok).empty());
  CHECK(load_error(ok, "parallelism: {cp: 2}\n").find("linear-attention") != std::string::npos);
  CHECK(load_error(ok, "parallelism: {tp: 8}\n").find("linear_attention.key_heads") == std::string::npos);
  CHECK(load_error(ok, "parallelism: {tp: 8}\n").find("linear_attention.heads") == std::string::npos);
  const std::string wide = b + ", linear_attention: {kind: gated_deltanet, heads: 12, key_heads: 4, head_dim: 64}, "
                               "layer_pattern: {every: 2, layer: attention+mlp, others: linear+mlp}}";
  CHECK(load_error(wide, "parallelism: {tp: 8}\n").find("linear_attention.heads") != std::string::npos);
}

TEST_CASE("A Qwen3-Next step runs end to end with its linear-attention layers in the kernels and memory", "[models][linear]") {
  const std::string y = "name: t\nmodel: qwen3-next-80b-a3b\nhardware: h100-sxm\ncluster: {gpus: 64}\n"
                        "parallelism: {tp: 1, pp: 4, ep: 16, zero_stage: 1}\n"
                        "training: {seq_len: 4096, global_batch: 1024, micro_batch: 1, precision: bf16, recompute: selective}\n";
  const auto r = testing::run_text(y);
  CHECK(r.step_time_s > 0);
  CHECK(r.tokens_per_s_per_gpu > 1000);
  // The gated DeltaNet scan costs time: a model whose linear layers were attention-free MLP-only
  // layers would be faster, and the linear layers hold activations.
  auto sc = scenarios::load_scenario_string(y, "m.yaml");
  const auto with = models::estimate_memory(sc.model, sc.training, sc.parallel, sc.gpu);
  auto bare = sc;
  for (auto& k : bare.model.layer_pattern)
    if (k.mixer == models::Mixer::linear) k.mixer = models::Mixer::none;
  bare.model.linear_attention = {};
  const auto without = models::estimate_memory(bare.model, bare.training, bare.parallel, bare.gpu);
  CHECK(with.activations_bytes > without.activations_bytes);
  CHECK(r.step_time_s > scenarios::simulate(bare).step_time_s);
}

TEST_CASE("explain: the time by layer part puts each mixer's kernels under its kind", "[models][linear][explain]") {
  const auto q = scenarios::model_preset("qwen3-next-80b-a3b");
  models::TrainingSpec t;
  t.seq_len = 4096, t.micro_batch = 1, t.precision = hardware::Precision::fp8;
  models::ParallelSpec p;
  const auto gpu = scenarios::load_scenario_string("name: t\nmodel: qwen3-next-80b-a3b\nhardware: h100-sxm\ncluster: {gpus: 8}\n"
                                                   "parallelism: {ep: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n", "m.yaml")
                       .gpu;
  const auto o = models::linear_attention_ops(q, t, p, gpu);
  for (const auto* pass : {&o.in_fwd, &o.in_bwd, &o.core_fwd, &o.core_bwd, &o.out_fwd, &o.out_bwd})
    for (const auto& op : pass->ops) {
      INFO(op.name);
      CHECK(std::string(scenarios::part_of_kernel(op.name)) == "linear-attention mixers");
    }
  CHECK(std::string(scenarios::part_of_kernel("ssd.chunk_scan")) == "Mamba mixers");
  CHECK(std::string(scenarios::part_of_kernel("dsa.indexer.scores")) == "attention mixers");
  CHECK(std::string(scenarios::part_of_kernel("experts.fc1.wgrad")) == "MoE MLPs");
  CHECK(std::string(scenarios::part_of_kernel("mlp_gate_up.dgrad")) == "dense MLPs");
  CHECK(std::string(scenarios::part_of_kernel("norm1")) == "other");
}

}}  // namespace CLUSTERSIM_TEST_ID
