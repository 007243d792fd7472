// DeepSeek Sparse Attention (model.sparse_attention): FLOPs against the V3.2 report's
// complexities worked by hand, the indexer's parameters, the sparse core's keys, the long-context
// crossover against dense MLA, and the loader's errors.
#include <catch2/catch.hpp>

#include "models/dsa_ops.hpp"
#include "models/flops.hpp"
#include "models/mla_ops.hpp"
#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/load_model.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

std::string load_error(const std::string& model) {
  try {
    scenarios::load_scenario_string("name: t\nmodel: " + model + "\nhardware: h100-sxm\ncluster: {gpus: 8}\n"
                                    "training: {seq_len: 2048, global_batch: 8}\n", "m.yaml");
  } catch (const scenarios::ScenarioError& e) {
    return e.what();
  }
  return "";
}

hardware::GpuSpec h100() {
  return scenarios::load_scenario_string("name: t\nmodel: deepseek-v3.2\nhardware: h100-sxm\ncluster: {gpus: 8}\n"
                                         "parallelism: {ep: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n", "m.yaml")
      .gpu;
}

}  // namespace

TEST_CASE("DSA FLOPs: the indexer's O(s·H_I·d_I) and the sparse core's O(k) per token, by hand", "[models][dsa]") {
  const auto m = scenarios::model_preset("deepseek-v3.2");
  // s = 4096: indexer 2·4096·64·128 = 67,108,864; core over k = 2048 keys in MLA's MQA mode
  // 2·2048·128·(512 + 64 + 512) = 570,425,344.
  CHECK(models::dsa_flop_per_token(m, 4096) == Approx(67108864.0 + 570425344.0));
  // s = 1024 < k: every key is selected: 2·1024·64·128 + 2·1024·128·1088.
  CHECK(models::dsa_flop_per_token(m, 1024) == Approx(2 * 1024.0 * 64 * 128 + 2 * 1024.0 * 128 * 1088));
  // The causal mean of the keys a query attends to: k − k²/(2s) past k, (s + 1)/2 before.
  CHECK(models::dsa_mean_keys(4096, 2048) == Approx(1536));
  CHECK(models::dsa_mean_keys(1000, 2048) == Approx(500.5));
  // The model FLOPs count it in every MLA layer (61) and the MTP module's.
  models::TrainingSpec t;
  t.seq_len = 32768;
  auto dense = m;
  dense.sparse_attention = {};
  // The indexer's projections (1536·64·128 + 7168·(128 + 64) matmul weights per layer) add 6× theirs.
  const double per_layer_dense = 2.0 * 32768 * 128 * (192 + 128), indexer_mm = 1536.0 * 64 * 128 + 7168.0 * 192;
  CHECK(models::flops_per_token(dense, t).model - models::flops_per_token(m, t).model ==
        Approx(3 * 62 * (per_layer_dense - models::dsa_flop_per_token(m, 32768)) - 6 * 62 * indexer_mm));
}

TEST_CASE("DSA: the indexer's parameters, and sparse attention cheaper than dense MLA only at long context", "[models][dsa]") {
  const auto m = scenarios::model_preset("deepseek-v3.2");
  auto dense = m;
  dense.sparse_attention = {};
  // Per layer: wq_b 1536·64·128, wk 7168·128 with its LayerNorm 2·128, weights_proj 7168·64.
  const double indexer = 1536.0 * 64 * 128 + 7168.0 * 128 + 256 + 7168.0 * 64;
  CHECK(models::count_params(m, 4096).total - models::count_params(dense, 4096).total == Approx(61 * indexer));
  const auto gpu = h100();
  models::ParallelSpec p;
  models::TrainingSpec t;
  t.micro_batch = 1, t.precision = hardware::Precision::bf16;
  for (int s : {4096, 65536}) {
    t.seq_len = s;
    const auto sparse_ops = models::mla_attention_ops(m, t, p, gpu), dense_ops = models::mla_attention_ops(dense, t, p, gpu);
    INFO(s);
    if (s == 4096) CHECK(sparse_ops.fwd.time_s > dense_ops.fwd.time_s);  // the indexer and MQA mode cost more at 4K
    if (s == 65536) {  // the dense core grows as s², the indexer's GEMM too but in FP8 on 128-wide heads
      CHECK(sparse_ops.fwd.time_s < 0.75 * dense_ops.fwd.time_s);
      double dsa_s = 0, core_s = 0;
      for (const auto& op : sparse_ops.fwd.ops) dsa_s += op.name.rfind("dsa.", 0) == 0 ? op.time_s : 0.0;
      for (const auto& op : dense_ops.fwd.ops) core_s += op.name == "mla.attention" ? op.time_s : 0.0;
      CHECK(dsa_s < 0.5 * core_s);
    }
    // The selected indices and the indexer's FP8 q and k are kept for backward.
    CHECK(sparse_ops.saved_bytes - dense_ops.saved_bytes > s * 2048.0 * 4 * 0.49);
  }
}

TEST_CASE("model.sparse_attention: inconsistent values are errors naming the key", "[scenarios][dsa]") {
  const std::string base = "{layers: 2, hidden: 1024, heads: 8, ffn_hidden: 4096, vocab: 1000, activation: swiglu, norm: rmsnorm";
  const std::string mla = ", mla: {q_lora_rank: 256, kv_lora_rank: 128, qk_nope_head_dim: 64, qk_rope_head_dim: 32, v_head_dim: 64}";
  const std::string dsa = ", sparse_attention: {kind: dsa, index_heads: 8, index_head_dim: 64, top_k_tokens: 512}";
  CHECK(load_error(base + mla + dsa + "}").empty());
  CHECK(load_error(base + dsa + "}").find("model.sparse_attention: needs model.mla") != std::string::npos);
  CHECK(load_error(base + mla + ", sparse_attention: {kind: nsa, index_heads: 8, top_k_tokens: 512}}").find("model.sparse_attention.kind") !=
        std::string::npos);
  CHECK(load_error(base + mla + ", sparse_attention: {kind: dsa, top_k_tokens: 512}}").find("model.sparse_attention.index_heads") !=
        std::string::npos);
  CHECK(load_error(base + mla + ", sparse_attention: {kind: dsa, index_heads: 8, top_k_tokens: 0}}").find("model.sparse_attention.top_k_tokens") !=
        std::string::npos);
  CHECK(load_error(base + mla + dsa + ", sliding_window: {tokens: 128}}").find("model.sparse_attention") != std::string::npos);
}

}}  // namespace CLUSTERSIM_TEST_ID
