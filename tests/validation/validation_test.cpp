#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "models/memory.hpp"
#include "scenarios/load.hpp"
#include "studies/csv_table.hpp"
#include "validation/conventions.hpp"
#include "validation/validation.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::studies;

namespace {

std::map<std::string, std::string> llama_row() {
  return {{"id", "TEST-001"}, {"model_name", "Llama 2 7B"}, {"layers", "32"}, {"hidden", "4096"}, {"heads", "32"},
          {"kv_heads", ""}, {"ffn_hidden", "11008"}, {"vocab", "32000"}, {"seq_len", "4096"},
          {"gpu_type", "H100-SXM"}, {"num_gpus", "8"}, {"tp", "1"}, {"pp", "1"}, {"dp", "8"}, {"cp", ""},
          {"micro_batch", "1"}, {"global_batch", "64"}, {"recompute", "none"}, {"precision", "bf16"},
          {"zero_stage_fsdp", "DDP + distributed optimizer"}, {"notes", ""}, {"measured_tps_gpu", "10000"}};
}

}  // namespace

TEST_CASE("a Llama row becomes a SwiGLU/RoPE scenario that loads and simulates", "[tools][validation]") {
  const RowScenario rs = row_scenario(llama_row());
  REQUIRE(rs.reason.empty());
  CHECK(rs.scenario.yaml().find("activation: swiglu") != std::string::npos);
  CHECK(rs.scenario.yaml().find("position: rope") != std::string::npos);
  CHECK(rs.scenario.yaml().find("tied_embeddings: false") != std::string::npos);
  CHECK(rs.scenario.yaml().find("zero_stage: 1") != std::string::npos);
  const RowOutcome o = validate_row(llama_row());
  REQUIRE(o.simulated);
  CHECK(o.predicted_tps_gpu > 0);
  CHECK(o.error == Approx((o.predicted_tps_gpu - 10000) / 10000));
  CHECK(o.headline());
}

TEST_CASE("rows that cannot be simulated carry a reason, doubtful rows carry a flag", "[tools][validation]") {
  auto row = llama_row();
  row["precision"] = "nvfp4";  // the loader's own refusal, naming the key: Hopper has no FP4 Tensor Cores
  CHECK_THAT(validate_row(row).reason, Catch::Contains("training.precision: h100-sxm has no NVFP4 Tensor Cores"));
  row = llama_row();
  row["gpu_type"] = "GB300";  // simulated on the partly estimated gb300 profile, out of the headline
  const RowOutcome gb300 = validate_row(row);
  CHECK(gb300.simulated);
  CHECK_FALSE(gb300.headline());
  row = llama_row();
  row["gpu_type"] = "TPU v5p";
  CHECK_THAT(validate_row(row).reason, Catch::Contains("no hardware profile for gpu_type 'TPU v5p'"));
  row = llama_row();
  row["measured_tps_gpu"] = "";
  CHECK_FALSE(validate_row(row).simulated);
  row = llama_row();
  row["model_name"] = "Llama 3.1 405B PROXY (7 layers)";
  const RowOutcome proxy = validate_row(row);
  CHECK(proxy.simulated);
  CHECK_FALSE(proxy.headline());
  row = llama_row();
  row["global_batch"] = "60";  // not a multiple of micro_batch × dp: the loader's own message
  CHECK_THAT(validate_row(row).reason, Catch::Contains("must be a multiple of micro_batch"));
}

TEST_CASE("error statistics: MAPE, median and the signed worst error", "[tools][validation]") {
  RowOutcome a, b, c;
  a.id = "a", a.error = 0.10;
  b.id = "b", b.error = -0.30;
  c.id = "c", c.error = 0.20;
  const ErrorStats s = error_stats({&a, &b, &c});
  CHECK(s.count == 3);
  CHECK(s.mape == Approx(0.2));
  CHECK(s.median_abs == Approx(0.2));
  CHECK(s.worst == Approx(-0.30));
  CHECK(s.worst_id == "b");
}

TEST_CASE("a stated inter-node bandwidth replaces the profile's NICs", "[tools][validation]") {
  // 400 Gb/s per node over 8 NICs is 50 Gb/s = 6.25 GB/s per NIC (the row YAML speaks bytes/s).
  auto row = llama_row();
  row["hw_notes"] = "A100-80G (400Gbps inter-node, GPUDirect RDMA)";
  row["gpu_type"] = "A100-80G";
  const RowScenario rs = row_scenario(row);
  CHECK_THAT(rs.scenario.yaml(), Catch::Contains("hardware: a100-80gb\nnetwork:"));
  CHECK_THAT(rs.scenario.yaml(), Catch::Contains("nic_bandwidth: 6.25 GB/s"));
  row["hw_notes"] = "H100-80G (3.2Tbps inter-node)";
  row["gpu_type"] = "H100-SXM";
  CHECK_THAT(row_scenario(row).scenario.yaml(), Catch::Contains("nic_bandwidth: 50 GB/s"));
  row["hw_notes"] = "H100-SXM 80GB";
  CHECK_THAT(row_scenario(row).scenario.yaml(), Catch::Contains("hardware: h100-sxm\n"));
}

TEST_CASE("Mixture-of-Experts rows are never run as dense models", "[tools][validation]") {
  auto row = llama_row();
  row["num_experts"] = "256";
  // Without top_k and the expert width the row is listed with its reason, not simulated dense.
  const RowScenario rs = row_scenario(row);
  CHECK(rs.scenario.yaml().empty());
  CHECK_THAT(rs.reason, Catch::Contains("architecture incomplete"));
  row["top_k"] = "8";
  row["expert_ffn_hidden"] = "2048";
  CHECK_THAT(row_scenario(row).scenario.yaml(), Catch::Contains("  moe:\n    experts: 256\n    top_k: 8\n"));
}

TEST_CASE("family conventions come from the cited data file", "[tools][validation]") {
  const auto& table = default_conventions();
  REQUIRE(!table.empty());
  for (const auto& c : table) {
    INFO(c.family << " " << c.key);
    CHECK(!c.source.empty());
  }
  CHECK_FALSE(conventions_for("MEG-SC21").flash_attention);
  CHECK(conventions_for("MEG-2020").recompute == "full");
  CHECK(conventions_for("DGXC-L70B").zero_stage == 1);  // DGXC* matches every DGXC family
  CHECK(conventions_for("SOMEONE-ELSE").flash_attention);
  CHECK_THROWS_WITH(parse_conventions("family,key,value,source\nX,zero_stage,7,cited\n", "c.csv"),
                    Catch::Contains("c.csv:2") && Catch::Contains("allowed: 0, 1, 2, 3"));
  CHECK_THROWS_WITH(parse_conventions("family,key,value,source\nX,colour,red,cited\n", "c.csv"),
                    Catch::Contains("unknown key 'colour'"));
  // The attention kernel a stack calls: IBM's blog names PyTorch SDPA's FlashAttention-2 backend.
  CHECK(conventions_for("IBMFSDP").attention_impl == "flash2");
  CHECK(conventions_for("SOMEONE-ELSE").attention_impl.empty());  // the profile's default
  CHECK_THROWS_WITH(parse_conventions("family,key,value,source\nX,attention_impl,flash9,cited\n", "c.csv"),
                    Catch::Contains("c.csv:2") && Catch::Contains("allowed: cudnn, flash1, flash2, flash3, flash4"));
}

TEST_CASE("a family's attention convention reaches the row's scenario (IBMFSDP on H100: FA2 rows)", "[tools][validation]") {
  auto row = llama_row();
  row["id"] = "IBMFSDP-999";
  const RowScenario rs = row_scenario(row);
  REQUIRE(rs.reason.empty());
  CHECK_THAT(rs.scenario.yaml(), Catch::Contains("attention_impl: flash2"));
  const auto sc = clustersim::scenarios::load_scenario(rs.scenario, "<row>");
  CHECK(sc.training.attention_impl == clustersim::hardware::AttentionImpl::flash2);
  CHECK(sc.gpu.default_attention == clustersim::hardware::AttentionImpl::cudnn);  // not the profile's default
  row["id"] = "TEST-001";  // no convention: the profile's default
  CHECK_THAT(row_scenario(row).scenario.yaml(), !Catch::Contains("attention_impl"));
}

TEST_CASE("IBM's selective AC is whole-block recompute of the fewest blocks that fit (family_conventions.csv)",
          "[tools][validation][recompute]") {
  namespace cs = clustersim;
  CHECK(conventions_for("IBMFSDP").selective_recompute == "fewest_blocks_that_fit");
  CHECK(conventions_for("SOMEONE-ELSE").selective_recompute == "attention_core");  // Megatron's selective
  CHECK_THROWS_WITH(parse_conventions("family,key,value,source\nX,selective_recompute,half,cited\n", "c.csv"),
                    Catch::Contains("c.csv:2") && Catch::Contains("allowed: attention_core, fewest_blocks_that_fit"));
  const CsvTable table = read_csv_file(CLUSTERSIM_SOURCE_DIR "/data/validation/published.csv");
  auto row_of = [&](const std::string& id) {
    for (const auto& r : table.rows)
      if (r.at("id") == id) return r;
    FAIL("no row " << id);
    return table.rows.front();
  };
  // Llama-2-70B on 464 H100 (batch 2, FSDP): its attention-core recompute does not fit in 80 GB.
  auto row = row_of("IBMFSDP-020");
  REQUIRE(row.at("recompute") == "selective");
  const RowScenario rs = row_scenario(row);
  REQUIRE(rs.reason.empty());
  CHECK_THAT(rs.scenario.yaml(), Catch::Contains("  recompute: full\n"));
  CHECK_THAT(rs.scenario.yaml(), Catch::Contains("  recompute_layers: "));
  auto load = [&](int n) {
    cs::scenarios::ScenarioPatch blocks = rs.scenario;
    blocks.set("training.recompute_layers", n);
    return cs::scenarios::load_scenario(blocks, "<row>");
  };
  auto fits = [&](int n) {
    const auto sc = load(n);
    return cs::models::estimate_memory(sc.model, sc.training, sc.parallel, sc.gpu).fits();
  };
  const int chosen = cs::scenarios::load_scenario(rs.scenario, "<row>").training.recompute_layers;
  INFO("recompute_layers " << chosen);
  CHECK(chosen > 0);
  CHECK(chosen < 80);  // not every block: a partial recompute
  CHECK(fits(chosen));
  CHECK_FALSE(fits(chosen - 1));  // the fewest that fit
  // Megatron-style selective (attention core) on the same row does not fit: why the convention matters.
  auto megatron = row;
  megatron["id"] = "TEST-020";
  const RowScenario ms = row_scenario(megatron);
  CHECK_THAT(ms.scenario.yaml(), Catch::Contains("recompute: selective\n"));
  const auto sel = cs::scenarios::load_scenario(ms.scenario, "<row>");
  CHECK_FALSE(cs::models::estimate_memory(sel.model, sel.training, sel.parallel, sel.gpu).fits());
  // A row that fits without recompute (Llama-2-7B, which fms-fsdp's README lists as 'No AC') recomputes nothing.
  CHECK_THAT(row_scenario(row_of("IBMFSDP-013")).scenario.yaml(), Catch::Contains("recompute_layers: 0\n"));
}

}}  // namespace CLUSTERSIM_TEST_ID
