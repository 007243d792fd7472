// Mamba-1 layers (model.mamba.kind: mamba1) and the Jamba 1.5 Mini preset: parameters against
// AI21's published totals, the scan FLOPs against Megatron-LM's estimate, the kernels, the keys and
// their errors, and the HF importer on Jamba's config.json fields.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "models/flops.hpp"
#include "models/mamba_ops.hpp"
#include "scenarios/error.hpp"
#include "scenarios/import/importers.hpp"
#include "scenarios/load_model.hpp"
#include "studies/memory_advice.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

const char* kJamba = "name: j\nmodel: jamba-1.5-mini\nhardware: h100-sxm\ncluster: {gpus: 64}\n"
                     "parallelism: {tp: 1, pp: 1, ep: 8, zero_stage: 3}\n"
                     "training: {seq_len: 4096, global_batch: 512, micro_batch: 1, precision: bf16, recompute: selective}\n";

std::string error_of(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  try {
    testing::run_text(yaml, sets);
  } catch (const scenarios::ScenarioError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("Jamba 1.5 Mini: 52B parameters, 12B active (AI21's model card)", "[models][mamba1]") {
  const auto m = scenarios::model_preset("jamba-1.5-mini");
  REQUIRE(m.mamba.mamba1());
  CHECK(m.mamba.inner() == 8192);  // expand 2 × 4096
  const models::ParamCount p = models::count_params(m, 4096);
  CHECK(p.total / 1e9 == Approx(52).epsilon(0.02));
  CHECK(p.active / 1e9 == Approx(12).epsilon(0.03));
  CHECK(m.mixer_count(models::Mixer::mamba) == 28);
  CHECK(m.mixer_count(models::Mixer::attention) == 4);
}

TEST_CASE("Mamba-1 scan FLOPs are Megatron-LM's 7 per channel and state", "[models][mamba1]") {
  // mamba_layer_flops: 7 · d_in · state_dim per token; Jamba: 7 · 8192 · 16.
  const auto m = scenarios::model_preset("jamba-1.5-mini");
  CHECK(models::mamba_scan_flop_per_token(m.mamba) == Approx(7.0 * 8192 * 16));
}

TEST_CASE("a Mamba-1 mixer runs its projections on Tensor Cores and the scan bound by HBM or FP32", "[models][mamba1]") {
  const auto sc = scenarios::load_scenario_string(kJamba, "j.yaml");
  const models::MambaOps o = models::mamba_mixer_ops(sc.model, sc.training, sc.parallel, sc.gpu);
  auto find = [](const models::PassCost& pass, const std::string& name) -> const models::KernelOp* {
    for (const auto& op : pass.ops)
      if (op.name == name) return &op;
    return nullptr;
  };
  const models::KernelOp* scan = find(o.core_fwd, "mamba.selective_scan");
  const models::KernelOp* x_proj = find(o.core_fwd, "mamba.x_proj");
  const models::KernelOp* dt_proj = find(o.core_fwd, "mamba.dt_proj");
  REQUIRE(scan);
  REQUIRE(x_proj);
  REQUIRE(dt_proj);
  CHECK(find(o.in_fwd, "mamba.in_proj")->flop == Approx(2.0 * 4096 * 4096 * 16384));  // T · h · 2·channels
  CHECK(x_proj->flop == Approx(2.0 * 4096 * 8192 * (256 + 32)));
  CHECK(dt_proj->flop == Approx(2.0 * 4096 * 256 * 8192));
  CHECK(scan->flop == Approx(7.0 * 4096 * 8192 * 16));
  // No faster than its HBM traffic nor than the FP32 vector peak allows.
  const double fp32 = sc.gpu.peak(hardware::Precision::fp32).si();
  CHECK(scan->time_s >= scan->flop / fp32);
  CHECK(scan->time_s >= scan->bytes / sc.gpu.hbm_bandwidth.si());
  const models::KernelOp* scan_bwd = find(o.core_bwd, "mamba.selective_scan.bwd");
  REQUIRE(scan_bwd);
  CHECK(scan_bwd->time_s > scan->time_s);
  // Nothing of Mamba-2's SSD.
  for (const auto& op : o.core_fwd.ops) CHECK(op.name.rfind("ssd.", 0) != 0);
}

TEST_CASE("Mamba-1 keys: what the loader refuses", "[models][mamba1]") {
  CHECK(error_of(kJamba).empty());
  CHECK(error_of(kJamba, {"parallelism.tp=2"}).find("tp = 2 with Mamba-1 layers") != std::string::npos);
  CHECK(error_of(kJamba, {"model.mamba.heads=8"}).find("unknown key 'heads'") != std::string::npos);
  CHECK(error_of(kJamba, {"model.mamba.kind=mamba3"}).find("mamba1") != std::string::npos);
  // A Mamba-1 model that does not fit is told to add pp or ep, not tp.
  const auto big = scenarios::load_scenario_string(std::string(kJamba), "j.yaml",
                                                   scenarios::ScenarioPatch::parse({"parallelism.zero_stage=1"}));
  const auto why = studies::memory_prescreen(big);
  REQUIRE(why);
  CHECK(why->find("a larger parallelism.pp or parallelism.ep") != std::string::npos);
}

TEST_CASE("hf: a Jamba config.json gives Mamba-1 layers, its attention and MoE periods", "[import][mamba1]") {
  std::ifstream in(std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/import_inputs/jamba_1_5_mini_config.json");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  namespace im = scenarios::importers;
  im::ImportOptions opt;
  opt.source = "jamba_1_5_mini_config.json";
  const im::Imported j = im::import_hf(text.str(), opt);
  const im::ImportedKey* pattern = j.find("model.layer_pattern");
  REQUIRE(pattern);
  CHECK(pattern->value.find("[mamba+mlp, mamba+moe, mamba+mlp, mamba+moe, attention+mlp, mamba+moe, ") == 0);
  CHECK(j.find("model.mamba.kind")->value == "mamba1");
  CHECK(j.find("model.mamba.dt_rank")->value == "256");
  const std::string tail = "hardware: h100-sxm\ncluster: {gpus: 64}\nparallelism: {ep: 8}\ntraining: {seq_len: 4096, global_batch: 64}\n";
  const auto sc = scenarios::load_scenario_string(im::to_yaml(j, {}) + tail, "imported.yaml");
  const auto p = scenarios::load_scenario_string("name: p\nmodel: jamba-1.5-mini\n" + tail, "p.yaml");
  CHECK(models::count_params(sc.model, 4096).total == Approx(models::count_params(p.model, 4096).total));
  CHECK(sc.model.layer_pattern == p.model.layer_pattern);
}

}}  // namespace CLUSTERSIM_TEST_ID
