// The MoE rows of data/validation/published_moe.csv become scenarios in the issue-15 contract;
// rows outside it are listed with their reason; only the latest release of a configuration is
// the figure of record (README_moe caveats 1 and 2).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"
#include "validation/conventions.hpp"
#include "validation/validation.hpp"
#include "validation/validation_moe.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::studies;
using clustersim::scenarios::load_scenario;

namespace {
const CsvTable& moe_table() {
  static const CsvTable t = parse_csv(published_moe_csv_text(), "published_moe.csv");
  return t;
}
const std::map<std::string, std::string>& row(const std::string& id) {
  for (const auto& r : moe_table().rows)
    if (r.at("id") == id) return r;
  FAIL("no row " << id);
  return moe_table().rows.front();
}
bool has(const std::string& yaml, const std::string& line) { return yaml.find(line) != std::string::npos; }
}  // namespace

TEST_CASE("a DeepSeek-V3 Megatron-Bridge row maps to MLA, experts, EP and forced balance", "[validation][moe]") {
  REQUIRE(moe_table().rows.size() == 210);
  const RowScenario rs = row_scenario(row("MOE-MBRIDGE-035"));  // GB200, 26.06, hybridep + A2A overlap
  REQUIRE(rs.reason.empty());
  INFO(rs.scenario.yaml());
  CHECK(has(rs.scenario.yaml(), "  mla:\n    q_lora_rank: 1536\n    kv_lora_rank: 512\n    qk_nope_head_dim: 128\n    qk_rope_head_dim: 64\n    v_head_dim: 128\n"));
  CHECK(has(rs.scenario.yaml(), "  moe:\n    experts: 256\n    top_k: 8\n    shared_experts: 1\n    expert_ffn_hidden: 2048\n    dense_layers: 3\n    frequency: 1\n"));
  CHECK(has(rs.scenario.yaml(), "  ep: 64\n"));
  CHECK(has(rs.scenario.yaml(), "  precision: mxfp8\n"));
  CHECK(has(rs.scenario.yaml(), "  moe_dispatcher: hybridep\n"));
  CHECK(has(rs.scenario.yaml(), "  moe_a2a_overlap: true\n"));
  // Forced balance is random router logits (Megatron-Core RandomSTE): the sampling floor, auto.
  CHECK(has(rs.scenario.yaml(), "  moe_load_imbalance: auto\n"));  // forced balance = random router logits: the sampling floor (family convention)
  CHECK(has(rs.scenario.yaml(), "  recompute: selective\n  recompute_modules: [mla_up_proj]\n"));
  CHECK_NOTHROW(load_scenario(rs.scenario, "row"));
}

TEST_CASE("GPT-OSS rows get biases and alternating sliding windows and token-dropping rows route for real", "[validation][moe]") {
  const RowScenario oss = row_scenario(row("MOE-MBRIDGE-065"));
  REQUIRE(oss.reason.empty());
  CHECK(has(oss.scenario.yaml(), "  sliding_window:\n    tokens: 128\n    every: 2\n"));
  CHECK(has(oss.scenario.yaml(), "  bias: true\n"));
  CHECK(has(oss.scenario.yaml(), "  head_dim: 64\n"));
  CHECK_NOTHROW(load_scenario(oss.scenario, "row"));
  const RowScenario drop = row_scenario(row("MOE-MBRIDGE-180"));  // 25.09 DeepSeekV3 (tokendrop)
  REQUIRE(drop.reason.empty());
  CHECK(has(drop.scenario.yaml(), "  moe_load_imbalance: auto\n"));
  CHECK(has(drop.scenario.yaml(), "  fp8_recipe: tensorwise\n"));
}

TEST_CASE("rows outside the contract are listed with their reason", "[validation][moe]") {
  // Nemotron 3 Nano and Super are simulated from their presets (hybrid Mamba-2 stacks).
  const RowScenario nano = row_scenario(row("MOE-MBRIDGE-047"));
  CHECK(nano.reason.empty());
  CHECK(has(nano.scenario.yaml(), "model: nemotron3-nano-30b-a3b\n"));
  CHECK(row_scenario(row("MOE-MBRIDGE-015")).reason.empty());  // Nemotron 3 Super (latent MoE)
  // DeepSeek-V4-Flash from its preset (compressed attention, hyper-connections), one MTP module.
  const RowScenario v4 = row_scenario(row("MOE-MBRIDGE-003"));
  CHECK(v4.reason.empty());
  CHECK(has(v4.scenario.yaml(), "model: deepseek-v4-flash\n"));
  CHECK(has(v4.scenario.yaml(), "cross_entropy: fp32\n"));
  // Nemotron 3 Ultra (latent MoE) and 3.5 Lightning from their presets too, each run with its MTP
  // block twice as Megatron-Bridge's recipes run it.
  const RowScenario ultra = row_scenario(row("MOE-MBRIDGE-017"));
  CHECK(ultra.reason.empty());
  CHECK(has(ultra.scenario.yaml(), "base: nemotron3-ultra-550b-a55b\n"));
  CHECK(has(ultra.scenario.yaml(), "mtp_layers: 2\n"));
  CHECK(has(row_scenario(row("MOE-MBRIDGE-012")).scenario.yaml(), "base: nemotron3.5-lightning-30b-a3b\n"));
  // A row without its GPU count, and no row recipe that assumes one, is not a configuration.
  auto no_gpus = row("MOE-DSREPORT-002");
  no_gpus["id"] = "MOE-DSREPORT-998";
  CHECK(row_scenario(no_gpus).reason == "num_gpus blank");
  CHECK(row_scenario(row("MOE-TORCHTITAN-003")).reason == "seq_len blank");
}

TEST_CASE("a batch-ramp row runs its ramp over the run's tokens, compared as the whole run's mean",
          "[validation][moe]") {
  // DeepSeek-V3's report: 3072 -> 15360 sequences over the first 469B of 14.8T tokens, 180K H800
  // GPU-hours per trillion tokens over the whole run (issue 29: within 15 %).
  const RowScenario rs = row_scenario(row("MOE-DSREPORT-001"));
  REQUIRE(rs.reason.empty());
  INFO(rs.scenario.yaml());
  CHECK(has(rs.scenario.yaml(), "  global_batch: 15360\n"));
  CHECK(has(rs.scenario.yaml(), "  batch_ramp:\n    from: 3072\n    to: 15360\n    tokens: 469000000000\n"));
  CHECK(has(rs.scenario.yaml(), "  tokens: 1.48e13\n"));
  CHECK(has(rs.scenario.yaml(), "  schedule: dualpipev\n"));
  const RowOutcome o = validate_row(row("MOE-DSREPORT-001"));
  REQUIRE(o.simulated);
  CHECK(std::abs(o.error) < 0.15);
  // The ramp's smaller batches (fewer micro-batches per pipeline) make the run's mean slower than
  // its full-batch step.
  const auto steady = clustersim::scenarios::simulate(load_scenario(rs.scenario, "ramp"));
  CHECK(o.predicted_tps_gpu < steady.tokens_per_s_per_gpu);
  CHECK(o.predicted_tps_gpu > 0.9 * steady.tokens_per_s_per_gpu);
  // A ramp without its length, or without the run's token count, is not a configuration.
  auto unknown_length = row("MOE-DSREPORT-001");
  unknown_length["global_batch"] = "3072->15360 sequences (ramp)";
  CHECK(row_scenario(unknown_length).reason.find("unpublished length") != std::string::npos);
  auto no_tokens = row("MOE-DSREPORT-001");
  no_tokens["id"] = "MOE-DSREPORT-999";
  CHECK(row_scenario(no_tokens).reason.find("token count") != std::string::npos);
}

// The whole run's mean tokens/s per GPU of a ramp row's scenario, as validate_row computes it.
double run_mean_tps_gpu(const RowScenario& rs, const std::string& gpus) {
  clustersim::scenarios::ScenarioPatch at = rs.scenario;
  at.set("cluster.gpus", clustersim::scenarios::value_of(gpus));
  const auto sc = load_scenario(at, "ramp");
  const auto rep = clustersim::scenarios::simulate(sc);
  return sc.training.tokens / (rep.days_to_train_ideal * 86400.0) / rep.num_gpus;
}

TEST_CASE("DeepSeek-V2's ramp row runs at an assumed cluster size, and says so", "[validation][moe]") {
  // The V2 paper gives the ramp (2304 -> 9216 sequences over the first 225B of 8.1T tokens), the
  // zero-bubble pipeline and the 172.8K GPU-hours per trillion tokens, but not the cluster's size:
  // the row recipe assumes DeepSeek's 2,048-GPU H800 cluster of the V3 report and labels it.
  const RowScenario rs = row_scenario(row("MOE-DSREPORT-002"));
  REQUIRE(rs.reason.empty());
  INFO(rs.scenario.yaml());
  CHECK(has(rs.scenario.yaml(), "  gpus: 2048\n"));
  CHECK(has(rs.scenario.yaml(), "  batch_ramp:\n    from: 2304\n    to: 9216\n    tokens: 225000000000\n"));
  CHECK(has(rs.scenario.yaml(), "  tokens: 8.1e12\n"));
  CHECK(has(rs.scenario.yaml(), "  schedule: zb-h1\n"));
  CHECK(std::any_of(rs.assumptions.begin(), rs.assumptions.end(),
                    [](const std::string& a) { return a.rfind("cluster.gpus=2048 (not published: ", 0) == 0; }));
  const RowOutcome o = validate_row(row("MOE-DSREPORT-002"));
  REQUIRE(o.simulated);
  CHECK(std::abs(o.error) < 0.15);  // issue 29, under the stated assumption
  // What the assumption moves: a smaller cluster keeps more micro-batches per pipeline (less
  // bubble, above all in the ramp's small batches), so the per-GPU mean falls as the cluster grows.
  const double at_1024 = run_mean_tps_gpu(rs, "1024"), at_4096 = run_mean_tps_gpu(rs, "4096");
  std::printf(
      "DeepSeek-V2 report row, run mean per GPU: 1,024 GPUs %.0f (%+.1f %%), 2,048 %.0f (%+.1f %%), "
      "4,096 %.0f (%+.1f %%); published %.1f\n",
      at_1024, 100 * (at_1024 / o.measured_tps_gpu - 1), o.predicted_tps_gpu, 100 * o.error, at_4096,
      100 * (at_4096 / o.measured_tps_gpu - 1), o.measured_tps_gpu);
  const double at_2048 = run_mean_tps_gpu(rs, "2048");
  CHECK(at_1024 > at_2048);
  CHECK(at_2048 > at_4096);
}

TEST_CASE("only the latest release of a configuration is the figure of record", "[validation][moe]") {
  const auto superseded = superseded_rows(moe_table());
  // DeepSeek-V3 on 256 GB300, MXFP8, GBS 4096: 26.02 (144), 26.04 (090), 26.04.01 (057), 26.06 (033),
  // 26.06.01 (019) all give way to 26.08 (001). GBS 15360 (034) is a configuration of its own.
  for (const char* old : {"MOE-MBRIDGE-144", "MOE-MBRIDGE-090", "MOE-MBRIDGE-057", "MOE-MBRIDGE-033", "MOE-MBRIDGE-019"})
    CHECK(superseded.at(old) == "MOE-MBRIDGE-001");
  CHECK(superseded.count("MOE-MBRIDGE-001") == 0);
  CHECK(superseded.count("MOE-MBRIDGE-034") == 0);
  // Precision is part of the configuration: 25.11's BF16 row (163) has no later BF16 release,
  // its MXFP8 twin (164) gives way to 26.08.
  CHECK(superseded.count("MOE-MBRIDGE-163") == 0);
  CHECK(superseded.at("MOE-MBRIDGE-164") == "MOE-MBRIDGE-001");
}

TEST_CASE("Megatron-Bridge GB200 rows run on the racks their SLURM segment gives", "[validation][moe]") {
  // scripts/performance/utils/executors.py: 4-GPU trays get --segment = the tray count up to 18,
  // else its largest divisor up to 18: 256 GPUs = 64 trays in segments of 16 (64 GPUs per rack).
  // The loader's default for NVL72 racks (scenarios::nvl_segment_gpus); the rows do not set it.
  const RowScenario big = row_scenario(row("MOE-MBRIDGE-002"));  // DeepSeek-V3, 256 GB200, EP 64
  REQUIRE(big.reason.empty());
  CHECK_FALSE(has(big.scenario.yaml(), "gpus_per_node"));
  const auto sc = load_scenario(big.scenario, "row");
  CHECK(sc.network.topology.gpus_per_node == 64);
  CHECK(sc.cluster.segment_assumed);
  const RowScenario small = row_scenario(row("MOE-MBRIDGE-008"));  // Qwen3-30B-A3B, 8 GB200: 2 trays
  CHECK(load_scenario(small.scenario, "row").network.topology.gpus_per_node == 8);
  const RowScenario dgx = row_scenario(row("MOE-MBRIDGE-074"));  // B200: 8-GPU DGX nodes, no segment
  const auto b200 = load_scenario(dgx.scenario, "row");
  CHECK(b200.network.topology.gpus_per_node == 8);
  CHECK_FALSE(b200.cluster.segment_assumed);
}

TEST_CASE("rows that leave recompute or the dispatcher blank take their release's recipe", "[validation][moe]") {
  struct Case {
    const char* id;
    std::vector<std::string> lines;
  };
  const std::vector<Case> cases = {
      // Megatron-Bridge DeepSeek-V3: 26.04.01 B200 (v0.4.1: mla_up_proj, hybridep), 25.11 GB200
      // (v0.2.0: mla_up_proj), 25.09 B200 and H100 (v0.1.0rc4 scripts/performance/run_script.py:
      // mla_up_proj on B200, mla_up_proj and mlp with DeepEP on H100). 060's own entry
      // (B200_FP8_MX_V2, data/validation/row_recipes.csv) adds 'mlp'.
      {"MOE-MBRIDGE-060",
       {"  recompute: selective\n", "  recompute_modules: [mla_up_proj, mlp]\n", "  moe_dispatcher: hybridep\n"}},
      {"MOE-MBRIDGE-168",
       {"  recompute: selective\n", "  recompute_modules: [mla_up_proj]\n", "  moe_dispatcher: alltoall\n"}},
      {"MOE-MBRIDGE-186",
       {"  recompute: selective\n", "  recompute_modules: [mla_up_proj]\n", "  moe_dispatcher: alltoall\n"}},
      {"MOE-MBRIDGE-191", {"  recompute_modules: [mla_up_proj, mlp]\n", "  moe_dispatcher: deepep\n"}},
      // Megatron-Bridge's DeepSeek-V3 recipes keep the MTP module (mtp_num_layers=1 at every tag
      // read): a blank mtp column means one module, a "no" none.
      {"MOE-MBRIDGE-187", {"  mtp_layers: 1\n"}},
      // A stated recompute is kept.
      {"MOE-MBRIDGE-173", {"  recompute_modules: [mla_up_proj]\n"}},
      // NeMo AutoModel: activation_checkpointing in the benchmark config of the page's date → full
      // (DeepSeek-V3 on 1,024 GPUs: its config from its first version, 2025-10-08; GPT-OSS-20B:
      // 2025-10-02); false → none (GPT-OSS-120B, whose ep the page left as '-': 16 that day).
      // Every AutoModel row keeps BF16 Adam state (no fp32 master).
      {"MOE-AUTOMODEL-005", {"  recompute: full\n", "  optimizer_dtype: bf16\n"}},
      {"MOE-AUTOMODEL-004", {"  recompute: full\n"}},
      {"MOE-AUTOMODEL-008", {"  recompute: full\n"}},
      {"MOE-AUTOMODEL-009", {"  recompute: none\n", "  ep: 16\n", "  optimizer_dtype: bf16\n"}},
  };
  for (const auto& c : cases) {
    const RowScenario rs = row_scenario(row(c.id));
    INFO(c.id << "\n" << rs.scenario.yaml());
    REQUIRE(rs.reason.empty());
    for (const auto& line : c.lines) CHECK(has(rs.scenario.yaml(), line));
    REQUIRE_NOTHROW(load_scenario(rs.scenario, "row"));
  }
  CHECK_FALSE(has(row_scenario(row("MOE-MBRIDGE-168")).scenario.yaml(), "mtp_layers"));   // "no (w/o MTP)"
  CHECK_FALSE(has(row_scenario(row("MOE-AUTOMODEL-004")).scenario.yaml(), "mtp_layers"));  // another stack
  // Qwen3 rows keep the stack's default (their recipes set no recompute).
  CHECK_FALSE(has(row_scenario(row("MOE-MBRIDGE-176")).scenario.yaml(), "recompute_modules"));
}

TEST_CASE("the optimizer-sharding text: 'distributed optimizer (FSDP=0)' is ZeRO-1, FSDP2 is ZeRO-3", "[validation][moe]") {
  // 138 Megatron-Bridge rows say "Megatron distributed optimizer (FSDP=0)"; naming FSDP to say it
  // is off once made them ZeRO-3.
  const RowScenario mb = row_scenario(row("MOE-MBRIDGE-074"));
  REQUIRE(row("MOE-MBRIDGE-074").at("zero_or_dist_opt") == "Megatron distributed optimizer (FSDP=0)");
  CHECK(has(mb.scenario.yaml(), "  zero_stage: 1\n"));
  const RowScenario fsdp = row_scenario(row("MOE-AUTOMODEL-009"));
  REQUIRE(row("MOE-AUTOMODEL-009").at("zero_or_dist_opt") == "FSDP2 (sharding degree 64)");
  CHECK(has(fsdp.scenario.yaml(), "  zero_stage: 3\n"));
}

}}  // namespace CLUSTERSIM_TEST_ID
