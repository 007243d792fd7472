// DeepSeek-V4's hybrid attention (model.compressed_attention) and hyper-connections
// (model.hyper_connections): parameters and model FLOPs against what Megatron-Bridge publishes,
// the mean keys against a count query by query, the kinds of block by compress ratio, the mHC
// overhead against DeepSeek's A/B, the recipe's memory, and the loader's errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "models/compressed_attention_ops.hpp"
#include "models/flops.hpp"
#include "models/layer_passes.hpp"
#include "scenarios/explain.hpp"
#include "scenarios/load_model.hpp"
#include "support/scenario_fixture.hpp"

namespace {
namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using Catch::Matchers::Contains;

namespace {

// Megatron-Bridge's 128-GPU GB200 perf recipe (perf_recipes/deepseek/gb200/deepseek_v4.py):
// TP1 PP1 EP64, GBS 2048, MBS 1, seq 4096, MXFP8, selective recompute of mla_up_proj.
std::string recipe(const std::string& model = "deepseek-v4-flash", const std::string& extra = "") {
  return "name: v4\nmodel: " + model +
         "\nhardware: gb200\ncluster: {gpus: 128}\n"
         "parallelism: {tp: 1, pp: 1, ep: 64, zero_stage: 1}\n"
         "training:\n  seq_len: 4096\n  global_batch: 2048\n  micro_batch: 1\n  precision: mxfp8\n"
         "  recompute: selective\n  recompute_modules: [mla_up_proj]\n  moe_dispatcher: deepep\n"
         "  cuda_graph_scope: [full_iteration]\n" +
         extra;
}

// The preset written out with one change to its model section (`key: value` lines appended).
std::string flash_with(const std::string& lines) { return "\n  base: deepseek-v4-flash\n" + lines; }

}  // namespace

TEST_CASE("DeepSeek-V4-Flash: 284 G parameters and 90.8 GFLOP per token, as Megatron-Bridge publishes",
          "[models][v4]") {
  const auto m = scenarios::model_preset("deepseek-v4-flash");
  // Megatron-Bridge examples/models/deepseek_v4/README.md (067f987): "~285B of HF weights".
  CHECK(models::count_params(m, 4096).total == Approx(285e9).epsilon(0.01));
  // DeepSeek-AI 2026, "DeepSeek-V4: Towards Highly Efficient Million-Token Context Intelligence"
  // (the technical report, abstract): Flash 284B parameters, 13B activated; Pro 1.6T, 49B activated.
  const auto pro = scenarios::model_preset("deepseek-v4-pro");
  INFO("flash active " << models::count_params(m, 4096).active << ", pro " << models::count_params(pro, 4096).total
                       << " / " << models::count_params(pro, 4096).active);
  CHECK(models::count_params(m, 4096).active == Approx(13e9).epsilon(0.08));
  CHECK(models::count_params(pro, 4096).total == Approx(1.6e12).epsilon(0.03));
  CHECK(models::count_params(pro, 4096).active == Approx(49e9).epsilon(0.05));
  // Its verification card (examples/model_verification_cards/deepseek-v4-flash/card.yaml) measured
  // 731.4 TFLOP/s per GPU at 8,056.45 tokens/s per GPU on 128 GB200: 90.78 GFLOP per token by its
  // own formula (flop_utils.py), which counts the window, CSA and HCA keys as our formula does.
  models::TrainingSpec t;
  t.seq_len = 4096;
  CHECK(models::flops_per_token(m, t).model == Approx(731.4e12 / 8056.45).epsilon(0.01));
}

TEST_CASE("compressed attention: the closed-form mean keys equal a count query by query", "[models][v4]") {
  const auto c = scenarios::model_preset("deepseek-v4-flash").compressed_attention;
  for (double s : {1024.0, 4096.0, 16384.0}) {
    for (int r : {0, 4, 128}) {
      // Query i sees the last min(i + 1, window) tokens and the entries j < (i + 1) / r; a CSA
      // layer keeps the top_k of those.
      double sum = 0;
      for (int i = 0; i < int(s); ++i) {
        double entries = r == 0 ? 0.0 : double((i + 1) / r);
        if (c.indexed(r)) entries = std::min<double>(entries, c.top_k);
        sum += std::min<double>(i + 1, c.window) + entries;
      }
      INFO("s " << s << " ratio " << r);
      CHECK(models::compressed_mean_keys(c, s, r) == Approx(sum / s).epsilon(0.01));
    }
  }
}

TEST_CASE("compressed attention: each layer runs its ratio's kind of block", "[models][v4]") {
  const auto sc = scenarios::load_scenario_string(recipe(), "v4.yaml");
  const auto c = models::step_costs(sc.model, sc.training, sc.parallel, sc.gpu);
  auto layers_with = [&](const std::string& op) {  // the signed terms' layers that run `op`
    double n = 0;
    for (const auto& pass : models::layer_passes(sc.model, sc.training, sc.parallel, sc.gpu, c, false))
      for (const auto& k : pass.pass.ops) n += k.name == op ? pass.layers : 0.0;
    return n;
  };
  // compress_ratios: layers 0 and 1 window only, then 4 and 128 alternating (21 CSA, 20 HCA).
  CHECK(layers_with("v4.indexer.scores") == 21);
  CHECK(layers_with("v4.compressor") == 41);
  CHECK(layers_with("v4.attention") == 43);
  CHECK(layers_with("qkv") == 0);  // no dense attention left in any block
}

TEST_CASE("hyper-connections: four streams cost what DeepSeek measured for mHC", "[models][v4]") {
  // Xie et al. 2025, "mHC: Manifold-Constrained Hyper-Connections" (arXiv 2512.24880): 6.7 % more
  // training time at n = 4 with fused kernels. Here: the same job with one residual stream.
  const auto with = testing::run_text(recipe());
  const auto without = testing::run_text(recipe(flash_with("  hyper_connections: null\n")));
  CHECK(with.step_time_s / without.step_time_s > 1.03);
  CHECK(with.step_time_s / without.step_time_s < 1.12);
  CHECK(with.memory.activations_bytes > without.memory.activations_bytes);
}

TEST_CASE("DeepSeek-V4-Flash: the recipe Megatron-Bridge ran on 128 GB200 fits, and mla_up_proj trades time for memory",
          "[models][v4]") {
  const auto r = testing::run_text(recipe());
  CHECK(r.memory.fits());
  auto none = recipe();
  none.replace(none.find("  recompute: selective\n  recompute_modules: [mla_up_proj]\n"),
               std::string("  recompute: selective\n  recompute_modules: [mla_up_proj]\n").size(),
               "  recompute: none\n");
  const auto kept = testing::run_text(none);
  CHECK(kept.memory.activations_bytes > r.memory.activations_bytes);
  CHECK(kept.step_time_s < r.step_time_s);
}

TEST_CASE("recompute_modules mhc: the streams between a block's mHC sites are rebuilt, not kept", "[models][v4]") {
  // Megatron-Bridge's 64-GPU BF16 recipe recomputes [moe_act, mhc, mla_up_proj].
  auto with_mhc = recipe();
  with_mhc.replace(with_mhc.find("[mla_up_proj]"), 13, "[mla_up_proj, mhc]");
  const auto base = testing::run_text(recipe()), mhc = testing::run_text(with_mhc);
  CHECK(mhc.memory.activations_bytes < base.memory.activations_bytes);
  CHECK(mhc.step_time_s > base.step_time_s);
  // It reruns the two sites' forward once per block: less than their whole share of the step.
  const auto plain = testing::run_text(recipe(flash_with("  hyper_connections: null\n")));
  CHECK(mhc.step_time_s - base.step_time_s < base.step_time_s - plain.step_time_s);
  auto mlp = with_mhc;
  mlp.replace(mlp.find("[mla_up_proj, mhc]"), 18, "[mlp, mhc]");
  CHECK_THAT(testing::load_error_of(mlp, "v4.yaml"), Contains("'mhc' and 'mlp' cannot be given together"));
  CHECK_THAT(testing::load_error_of("name: t\nmodel: deepseek-v3\nhardware: h100-sxm\ncluster: {gpus: 64}\n"
                                    "parallelism: {ep: 64}\ntraining: {seq_len: 4096, global_batch: 64, "
                                    "recompute: selective, recompute_modules: [mhc]}\n",
                                    "m.yaml"),
             Contains("'mhc' needs hyper-connections"));
}

TEST_CASE("selective recompute of core_attn reruns each V4 block's own core, not a dense one", "[models][v4]") {
  auto core_attn = recipe();
  core_attn.replace(core_attn.find("[mla_up_proj]"), 13, "[core_attn]");
  auto none = recipe();
  none.replace(none.find("  recompute: selective\n  recompute_modules: [mla_up_proj]\n"),
               std::string("  recompute: selective\n  recompute_modules: [mla_up_proj]\n").size(),
               "  recompute: none\n");
  auto calls = [](const std::string& yaml, const std::string& op) {
    const auto sc = scenarios::load_scenario_string(yaml, "v4.yaml");
    const auto ex = scenarios::explain(sc, scenarios::simulate(sc));
    for (const auto& o : ex.ops)
      if (o.name == op) return std::pair{o.calls_per_step, o.seconds_per_step};
    return std::pair{0.0, 0.0};
  };
  const auto [rerun_calls, rerun_s] = calls(core_attn, "v4.attention");
  const auto [plain_calls, plain_s] = calls(none, "v4.attention");
  CHECK(rerun_calls == Approx(2 * plain_calls));  // the forward, and its rerun before the backward
  CHECK(calls(core_attn, "attention").first == 0);
  CHECK(std::string(scenarios::part_of_kernel("mhc.attn.pre")) == "hyper-connections");
  CHECK(std::string(scenarios::part_of_kernel("v4.indexer.scores")) == "attention mixers");
  // The step grows by about the cores' forward time (their rerun), far below a dense core's.
  const double added = testing::run_text(core_attn).step_time_s - testing::run_text(none).step_time_s;
  CHECK(added > 0.5 * plain_s);
  CHECK(added < 1.5 * plain_s);
}

TEST_CASE("compressed attention: inconsistent values exit with the key named", "[models][v4][errors]") {
  const std::string base =
      "name: t\nhardware: h100-sxm\ncluster: {gpus: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n";
  auto error_of = [&](const std::string& model_lines) {
    return testing::load_error_of(base + "model:" + flash_with(model_lines), "m.yaml");
  };
  CHECK_THAT(
      error_of("  compressed_attention: {kind: deepseek_v4, ratios: [0, 4], q_lora_rank: 1024, o_lora_rank: 1024, "
               "index_heads: 64}\n"),
      Contains("model.compressed_attention.ratios") && Contains("has 2 entries"));
  CHECK_THAT(error_of("  kv_heads: 8\n"), Contains("model.compressed_attention") && Contains("kv_heads: 1"));
  CHECK_THAT(error_of("  sliding_window: {tokens: 128}\n"),
             Contains("cannot be given together with model.sliding_window"));
  CHECK_THAT(error_of("  hyper_connections: {streams: 1}\n"), Contains("model.hyper_connections.streams"));
  CHECK_THAT(testing::load_error_of(base + "model:\n  base: llama3-8b\n  hyper_connections: {streams: 4}\n", "m.yaml"),
             Contains("model.hyper_connections") && Contains("compressed_attention only"));
  std::string ratios = "[0";
  for (int i = 1; i < 43; ++i) ratios += i == 5 ? ", 1" : i == 7 ? ", 64" : i % 2 ? ", 4" : ", 128";
  ratios += "]";
  const std::string spec =
      "  compressed_attention: {kind: deepseek_v4, q_lora_rank: 1024, o_groups: 8, o_lora_rank: 1024, "
      "index_heads: 64, ratios: ";
  CHECK_THAT(error_of(spec + ratios + "}\n"), Contains("ratios") && Contains("entry 6 must be 0"));
  std::string two = ratios;
  two.replace(two.find(", 1,"), 4, ", 4,");
  CHECK_THAT(error_of(spec + two + "}\n"), Contains("second unindexed ratio"));
  auto tp2 = recipe();
  tp2.replace(tp2.find("tp: 1"), 5, "tp: 2");
  CHECK_THAT(testing::load_error_of(tp2, "v4.yaml"), Contains("parallelism.tp") && Contains("compressed attention"));
}

}  // namespace CLUSTERSIM_TEST_ID
}  // namespace
