// Mamba-2 (SSD) layers and hybrid stacks: FLOPs against a hand computation from the SSD paper's
// formulas, parameters, the layer pattern keys and their errors, a Nemotron 3 row end to end.
#include <catch2/catch.hpp>

#include "models/flops.hpp"
#include "models/mamba_ops.hpp"
#include "scenarios/error.hpp"
#include "scenarios/load_hybrid.hpp"
#include "scenarios/load_model.hpp"
#include "studies/plan_bound.hpp"
#include "studies/sweep_engine.hpp"
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

const char* kHybrid = "{layers: 4, hidden: 1024, heads: 8, ffn_hidden: 4096, vocab: 1000, activation: relu2, norm: rmsnorm";
const char* kMamba = "mamba: {state_dim: 64, heads: 16, head_dim: 64, groups: 2}";

}  // namespace

TEST_CASE("SSD FLOPs per token match the SSD paper's chunked algorithm computed by hand", "[models][mamba]") {
  // Dao & Gu 2024 (arXiv 2405.21060) §6: with Q = 128, N = 128, P = 64, H = 64, G = 8 (Nemotron 3
  // Nano): C·Bᵀ 2·128·128·8 = 262,144; (L∘CBᵀ)·X 2·128·64·64 = 1,048,576; chunk states
  // 2·128·64·64 = 1,048,576; state pass 2·64·64·128/128 = 8,192; output 2·128·64·64 = 1,048,576.
  const auto m = scenarios::model_preset("nemotron3-nano-30b-a3b");
  CHECK(models::ssd_flop_per_token(m.mamba) == Approx(262144.0 + 1048576.0 + 1048576.0 + 8192.0 + 1048576.0));
  // The kernel list's tensor-core work is the same sum without the element-wise state pass.
  models::TrainingSpec t;
  t.seq_len = 4096, t.micro_batch = 2, t.precision = hardware::Precision::bf16;
  models::ParallelSpec p;
  const auto gpu = scenarios::load_scenario_string("name: t\nmodel: nemotron3-nano-30b-a3b\nhardware: h100-sxm\ncluster: {gpus: 8}\n"
                                                   "parallelism: {ep: 8}\ntraining: {seq_len: 4096, global_batch: 8}\n",
                                                   "m.yaml")
                       .gpu;
  const models::MambaOps o = models::mamba_mixer_ops(m, t, p, gpu);
  const double tokens = 8192;
  CHECK(o.core_fwd.flop == Approx(tokens * (262144.0 + 1048576.0 + 2 * 1048576.0)));
  // in_proj h → 2·4096 + 2·8·128 + 64 = 10,304 wide (the HF checkpoint's in_proj out_features).
  CHECK(o.in_fwd.flop == Approx(2 * tokens * 10304.0 * 2688.0));
  CHECK(o.out_fwd.flop == Approx(2 * tokens * 2688.0 * 4096.0));
  CHECK(o.core_bwd.flop > 1.5 * o.core_fwd.flop);
  // TP 2 halves the rank's heads and groups, hence its scan work.
  p.tp = 2;
  CHECK(models::mamba_mixer_ops(m, t, p, gpu).core_fwd.flop == Approx(o.core_fwd.flop / 2));
}

TEST_CASE("Mamba-2 mixer parameters and hybrid preset sizes match their configs and model cards", "[models][mamba]") {
  const auto nano = scenarios::model_preset("nemotron3-nano-30b-a3b");
  // in_proj 2688·10304 + conv (4096 + 2·8·128)·(4 + 1) + dt_bias, A_log, D 3·64 + norm 4096 + out_proj 4096·2688.
  CHECK(models::mamba_params(nano) == Approx(2688.0 * 10304 + 6144.0 * 5 + 192 + 4096 + 4096.0 * 2688));
  // Model cards: Nano 31.6B total, 3.2B active without the embedding (3.6B with it); Super 120B
  // total, 12B active; Nemotron-H 8B and 56B.
  const auto pn = models::count_params(nano, 8192);
  CHECK(pn.total == Approx(31.6e9).epsilon(0.02));
  CHECK(pn.active - pn.embedding == Approx(3.2e9).epsilon(0.05));
  const auto ps = models::count_params(scenarios::model_preset("nemotron3-super-120b-a12b"), 8192);
  CHECK(ps.total == Approx(120e9).epsilon(0.03));
  CHECK(ps.active == Approx(12e9).epsilon(0.08));
  // Ultra: 550B total, 55B active (its name).
  const auto pu = models::count_params(scenarios::model_preset("nemotron3-ultra-550b-a55b"), 8192);
  CHECK(pu.total == Approx(550e9).epsilon(0.02));
  CHECK(pu.active == Approx(55e9).epsilon(0.08));
  CHECK(models::count_params(scenarios::model_preset("nemotron-h-8b"), 8192).total == Approx(8e9).epsilon(0.05));
  CHECK(models::count_params(scenarios::model_preset("nemotron-h-56b"), 8192).total == Approx(56e9).epsilon(0.05));
}

TEST_CASE("layer_pattern: pattern strings, lists and the every-k-th short form", "[scenarios][mamba]") {
  std::string error;
  const auto kinds = scenarios::parse_layer_pattern("M-*E", &error);
  REQUIRE(error.empty());
  REQUIRE(kinds.size() == 4);
  CHECK(kinds[0] == models::LayerKind{models::Mixer::mamba, models::MlpKind::none});
  CHECK(kinds[1] == models::LayerKind{models::Mixer::none, models::MlpKind::dense});
  CHECK(kinds[2] == models::LayerKind{models::Mixer::attention, models::MlpKind::none});
  CHECK(kinds[3] == models::LayerKind{models::Mixer::none, models::MlpKind::moe});
  CHECK(scenarios::parse_layer_pattern("MMx", &error).empty());
  CHECK(error.find("character 3 ('x')") != std::string::npos);

  const std::string h = kHybrid, mb = kMamba;
  const auto every = scenarios::load_scenario_string(
      "name: t\nmodel: " + h + ", " + mb + ", layer_pattern: {every: 4, layer: attention+mlp, others: mamba+mlp}}\n"
      "hardware: h100-sxm\ncluster: {gpus: 8}\ntraining: {seq_len: 2048, global_batch: 8}\n", "m.yaml");
  CHECK(every.model.mixer_count(models::Mixer::attention) == 1);
  CHECK(every.model.layer_kind(3).mixer == models::Mixer::attention);
  CHECK(every.model.layer_kind(0) == models::LayerKind{models::Mixer::mamba, models::MlpKind::dense});
  const auto list = scenarios::load_scenario_string(
      "name: t\nmodel: " + h + ", " + mb + ", layer_pattern: [mamba, mlp, attention, mlp]}\n"
      "hardware: h100-sxm\ncluster: {gpus: 8}\ntraining: {seq_len: 2048, global_batch: 8}\n", "m.yaml");
  CHECK(list.model.layer_kind(1) == models::LayerKind{models::Mixer::none, models::MlpKind::dense});
}

TEST_CASE("layer_pattern and model.mamba: inconsistent values are errors naming the key", "[scenarios][mamba]") {
  const std::string h = kHybrid, mb = kMamba;
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {h + ", " + mb + ", layer_pattern: \"M-M\"}", {"model.layer_pattern", "has 3 layers but model.layers is 4"}},
      {h + ", " + mb + ", layer_pattern: \"M-Mx\"}", {"model.layer_pattern", "character 4"}},
      {h + ", layer_pattern: \"M-M-\"}", {"model.layer_pattern", "model.mamba is not given"}},
      {h + ", " + mb + ", layer_pattern: \"*-*-\"}", {"model.mamba", "no Mamba layer"}},
      {h + ", " + mb + "}", {"model.mamba", "needs model.layer_pattern"}},
      {h + ", " + mb + ", layer_pattern: \"M-ME\"}", {"model.layer_pattern", "model.moe is not given"}},
      {h + ", " + mb + ", layer_pattern: [mamba, mlp, tea, mlp]}", {"model.layer_pattern", "entry 3"}},
      {h + ", mamba: {state_dim: 64, heads: 16, groups: 3}, layer_pattern: \"M-M-\"}", {"model.mamba.groups", "multiple of groups"}},
      {h + ", mamba: {heads: 16}, layer_pattern: \"M-M-\"}", {"model.mamba.state_dim", "is required"}},
      {h + ", " + mb + ", layer_pattern: \"M-ME\", moe: {experts: 8, top_k: 2, expert_ffn_hidden: 512, frequency: 2}}",
       {"model.moe.frequency", "layer_pattern"}},
  };
  for (const auto& [model, needles] : cases) {
    INFO(model);
    const std::string e = load_error(model);
    for (const auto& n : needles) CHECK(e.find(n) != std::string::npos);
  }
  const std::string ok = h + ", " + mb + ", layer_pattern: \"M-*-\"}";
  CHECK(load_error(ok).empty());
  CHECK(load_error(ok, "parallelism: {cp: 2}\n").find("Mamba") != std::string::npos);
  CHECK(load_error(ok, "parallelism: {tp: 4}\n").find("mamba.groups") != std::string::npos);
}

TEST_CASE("A Nemotron 3 Nano benchmark row runs end to end with Mamba and MoE layers in its step", "[models][mamba]") {
  // MOE-MBRIDGE-050's layout (data/validation/published_moe.csv): 16 H100, EP 8, micro-batch 1,
  // global batch 1024 of 8192 tokens, FP8.
  const std::string y = "name: t\nmodel: nemotron3-nano-30b-a3b\nhardware: h100-sxm\ncluster: {gpus: 16}\n"
                        "parallelism: {tp: 1, pp: 1, ep: 8, zero_stage: 1}\n"
                        "training: {seq_len: 8192, global_batch: 1024, micro_batch: 1, precision: fp8, recompute: selective}\n";
  const auto r = testing::run_text(y);
  CHECK(r.step_time_s > 0);
  const double tps = r.tokens_per_s_per_gpu;
  CHECK(tps > 5000);
  CHECK(tps < 40000);
  // The MFU numerator counts the SSD scans: Mamba layers add to the model FLOPs per token.
  auto no_scan = scenarios::model_preset("nemotron3-nano-30b-a3b");
  no_scan.mamba.chunk = 1, no_scan.mamba.state_dim = 1, no_scan.mamba.groups = 1;
  models::TrainingSpec t;
  t.seq_len = 8192;
  CHECK(models::flops_per_token(scenarios::model_preset("nemotron3-nano-30b-a3b"), t).model >
        models::flops_per_token(no_scan, t).model);
}

TEST_CASE("the plan search's step-time lower bounds stay below a hybrid stack's simulated step", "[studies][mamba]") {
  // Nemotron-H 8B: 24 Mamba, 4 attention and 24 MLP layers, each cheaper than the dense
  // attention + MLP block the bounds cost per layer; a bound above the step would prune plans
  // the search should have kept.
  const auto sc = scenarios::load_scenario_string(
      "name: t\nmodel: nemotron-h-8b\nhardware: h100-sxm\ncluster: {gpus: 16}\nparallelism: {tp: 2, pp: 2}\n"
      "training: {seq_len: 8192, global_batch: 64, micro_batch: 1}\n", "m.yaml");
  const double step = scenarios::simulate(sc).step_time_s;
  CHECK(studies::step_time_lower_bound_s(sc) <= step);
  CHECK(studies::plan_step_lower_bound_s(sc) <= step);
  CHECK(studies::plan_step_network_bound_s(sc) <= step);
}

TEST_CASE("cuda_graph_scope mamba captures the Mamba layers, attn the attention layers", "[models][mamba][host]") {
  // Nemotron-H 8B (mostly Mamba layers) at a host-bound size: one 256-token sequence per GPU, eager
  // launches on a Grace host. Megatron's scopes are per layer kind: attn graphs only the few
  // attention layers, mamba the Mamba ones.
  const std::string base = R"(
model: nemotron-h-8b
hardware: gb200
cluster: {gpus: 8}
training: {seq_len: 256, global_batch: 8, micro_batch: 1})";
  auto step = [&](const std::string& scope) {
    return testing::run_text(base, {"training.cuda_graph_scope=" + scope}).step_time_s;
  };
  const double eager = step("[]"), attn = step("[attn]"), mamba = step("[mamba]"), both = step("[attn, mamba]");
  INFO("eager " << eager << " s, attn " << attn << " s, mamba " << mamba << " s, both " << both << " s");
  CHECK(mamba < eager);
  CHECK(both < attn);
  CHECK(eager - mamba > attn - both - 1e-12);  // graphing the Mamba layers saves the same with or without attn
  CHECK(eager - mamba > eager - attn);         // more Mamba layers than attention layers to graph
  // 'mamba' needs Mamba layers.
  try {
    testing::run_text(R"(
model: llama3-8b
hardware: h100-sxm
cluster: {gpus: 8}
training: {seq_len: 2048, global_batch: 8, cuda_graph_scope: [mamba]})");
    FAIL("a dense model took the mamba scope");
  } catch (const scenarios::ScenarioError& e) {
    CHECK_THAT(e.what(),
               Catch::Contains("training.cuda_graph_scope") && Catch::Contains("needs a model with Mamba layers"));
  }
}
}}  // namespace CLUSTERSIM_TEST_ID
