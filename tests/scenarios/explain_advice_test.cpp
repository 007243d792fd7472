#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "scenarios/explain.hpp"
#include "scenarios/explain_advice.hpp"
#include "scenarios/load.hpp"
#include "scenarios/plan_rules.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {
const std::string kDir = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/";

// Each advice re-simulated independently here (not read back from the search): loading the
// change through the loader's own --set path also proves the change is a valid configuration.
void check_no_regression(const std::string& file, const std::vector<std::string>& sets) {
  const auto sc = scenarios::load_scenario_file(kDir + file, sets);
  const auto r = scenarios::simulate(sc);
  const auto ex = scenarios::explain(sc, r);
  for (const auto& a : ex.advice) {
    INFO(file << ": " << a.symptom << " → " << a.change);
    CHECK(a.mfu_before == Approx(r.mfu).epsilon(1e-12));
    if (r.memory.fits()) {
      CHECK(a.fits);
      CHECK(a.mfu_after > a.mfu_before);
      CHECK(a.step_after_s < a.step_before_s);
    } else {
      CHECK(a.fits);  // a plan that does not fit is improved only by one that does
      CHECK_FALSE(a.fits_before);
    }
    // The change is a configuration the loader accepts, and it simulates to what the advice says.
    if (a.change.find(';') == std::string::npos && a.change.rfind("training.micro_batch", 0) == 0) {
      const std::string to = a.change.substr(a.change.rfind(' ') + 1);
      std::vector<std::string> again = sets;
      again.push_back("training.micro_batch=" + to);
      const auto r2 = scenarios::simulate(scenarios::load_scenario_file(kDir + file, again));
      CHECK(r2.mfu == Approx(a.mfu_after).epsilon(1e-9));
    }
  }
}
}  // namespace

TEST_CASE("explain advice never lists a regression, on every shipped scenario and variants", "[scenarios][explain][advice]") {
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    if (entry.path().extension() == ".yaml") check_no_regression(entry.path().filename().string(), {});
  }
  // Variants: a slow recompute, no DP overlap, a large micro-batch, a deep bubble, a plan that does not fit.
  check_no_regression("7b_256xh100.yaml", {"training.recompute=full", "training.overlap_grad_reduce=false"});
  check_no_regression("7b_256xh100.yaml", {"training.micro_batch=4"});
  check_no_regression("70b_512xh100_tp8pp4.yaml", {"training.micro_batch=2", "parallelism.tp_comm_overlap=true"});
  check_no_regression("70b_512xh100_tp8pp4.yaml", {"parallelism.cp=1", "parallelism.zero_stage=0"});
  // 82 GiB of 80: only changes that make it fit are advice.
  check_no_regression("70b_512xh100_tp8pp4.yaml", {"parallelism.cp=1", "parallelism.zero_stage=0", "training.micro_batch=2"});
}

TEST_CASE("explain advice on the 70B tp8pp4 scenario finds an interleaved vpp above 2 when it is better", "[scenarios][explain][advice]") {
  const auto sc = scenarios::load_scenario_file(kDir + "70b_512xh100_tp8pp4.yaml");
  const auto r = scenarios::simulate(sc);
  // The search's own best vpp, then every vpp simulated here independently: the advised one
  // must be the best of them and better than vpp 2 (the old one-step advice).
  double best_mfu = r.mfu;
  int best_vpp = 1;
  double mfu_vpp2 = 0;
  for (int v = 2; v * sc.parallel.pp <= sc.model.layers; ++v) {
    const std::vector<std::string> sets = {"parallelism.schedule=interleaved", "parallelism.vpp=" + std::to_string(v)};
    const auto rv = scenarios::simulate(scenarios::load_scenario_file(kDir + "70b_512xh100_tp8pp4.yaml", sets));
    if (v == 2) mfu_vpp2 = rv.mfu;
    if (rv.memory.fits() && rv.mfu > best_mfu) best_mfu = rv.mfu, best_vpp = v;
  }
  INFO("best vpp " << best_vpp << " MFU " << best_mfu << ", vpp 2 MFU " << mfu_vpp2 << ", as given " << r.mfu);
  REQUIRE(best_vpp > 2);
  REQUIRE(best_mfu > mfu_vpp2);
  const auto ex = scenarios::explain(sc, r);
  bool found = false;
  for (const auto& a : ex.advice)
    if (a.change.rfind("parallelism.vpp 1 → " + std::to_string(best_vpp) + " ", 0) == 0) {
      found = true;
      CHECK(a.mfu_after == Approx(best_mfu).epsilon(1e-12));
    }
  CHECK(found);
}

TEST_CASE("the advice search covers each knob's range and stays bounded", "[scenarios][explain][advice]") {
  const auto sc = scenarios::load_scenario_file(kDir + "70b_512xh100_tp8pp4.yaml");
  const auto c = scenarios::advice_candidates(sc);
  auto has = [&](const std::string& s) { return std::find(c.begin(), c.end(), s) != c.end(); };
  CHECK(has("training.recompute none → selective"));
  CHECK(has("training.recompute none → full"));
  CHECK(has("parallelism.zero_stage 1 → 3"));
  CHECK(has("parallelism.tp_comm_overlap false → true"));
  CHECK(has("parallelism.cp 2 → 1 (dp 8 → 16)"));
  CHECK(has("parallelism.vpp 1 → 20 (schedule interleaved)"));
  CHECK(has("parallelism.vpp 1 → 3 (schedule interleaved), uneven split"));
  CHECK(has("training.micro_batch 1 → 2"));
  CHECK(c.size() < 60);
}

TEST_CASE("the pipeline bubble is one number: report text, JSON breakdown, waterfall and advice symptom", "[scenarios][explain]") {
  for (const char* file : {"70b_512xh100_tp8pp4.yaml", "175b_1024xa100.yaml"}) {
    const auto sc = scenarios::load_scenario_file(kDir + file);
    const auto r = scenarios::simulate(sc);
    const auto ex = scenarios::explain(sc, r);
    const double bubble = r.step.breakdown.bubble_s;  // what the text report's row and JSON's breakdown.bubble_s print
    INFO(file << ": bubble " << bubble << " s");
    REQUIRE(bubble > 0);
    int found = 0;
    for (const auto& w : ex.waterfall)
      if (w.cause.find("bubble") != std::string::npos) {
        ++found;
        CHECK(w.cause == scenarios::kBubbleCause);
        CHECK(w.seconds == bubble);
      }
    CHECK(found == 1);
    for (const auto& a : ex.advice)
      if (a.symptom.rfind(scenarios::kBubbleCause, 0) == 0) {
        char share[32];
        std::snprintf(share, sizeof share, ": %.1f %% of the step", 100 * bubble / r.step_time_s);
        CHECK(a.symptom.find(share) != std::string::npos);
      }
  }
}

namespace {
// Llama 2 7B on 8 H100 with pp 8 under 1F1B: 4 layers a stage, no TP (nothing for zb-h1's B
// passes to expose), memory to spare.
const char* kDeepPipeline =
    "name: deep\nmodel: llama2-7b\nhardware: h100-sxm\ncluster: {gpus: 8}\n"
    "parallelism: {pp: 8, zero_stage: 0}\n"
    "training: {seq_len: 2048, micro_batch: 1, recompute: none, tokens: 1e10}\n";
const char* kZbChange = "parallelism.schedule 1f1b → zb-h1";

const scenarios::Advice* zb_advice(const scenarios::Explanation& ex) {
  for (const auto& a : ex.advice)
    if (a.change == kZbChange) return &a;
  return nullptr;
}
}  // namespace

TEST_CASE("a large 1F1B bubble gets zb-h1 advice with its simulated gain and the memory model's cost",
          "[scenarios][explain][advice][zb]") {
  // 8 micro-batches on 8 stages: the bubble is ~40 % of the step.
  const auto sc = scenarios::load_scenario_string(kDeepPipeline, "deep.yaml", {"training.global_batch=8"});
  const auto r = scenarios::simulate(sc);
  REQUIRE(r.step.breakdown.bubble_s >= scenarios::kLargeBubbleShare * r.step_time_s);
  const auto ex = scenarios::explain(sc, r);
  const scenarios::Advice* a = zb_advice(ex);
  REQUIRE(a != nullptr);
  CHECK_THAT(a->symptom, Catch::StartsWith(scenarios::kBubbleCause));
  // The figures are those of the same scenario run with the schedule set.
  const auto zb = scenarios::simulate(
      scenarios::load_scenario_string(kDeepPipeline, "deep.yaml", {"training.global_batch=8", "parallelism.schedule=zb-h1"}));
  CHECK(a->step_before_s == r.step_time_s);
  CHECK(a->step_after_s == zb.step_time_s);
  CHECK(a->step_after_s < a->step_before_s);
  CHECK(a->memory_before_bytes == r.memory.total_bytes);
  CHECK(a->memory_after_bytes == zb.memory.total_bytes);
  CHECK(a->fits);
}

TEST_CASE("no zb-h1 advice without a large 1F1B bubble", "[scenarios][explain][advice][zb]") {
  // 512 micro-batches on the same 8 stages: the bubble is ~1-2 % of the step.
  {
    const auto sc = scenarios::load_scenario_string(kDeepPipeline, "deep.yaml", {"training.global_batch=512"});
    const auto r = scenarios::simulate(sc);
    REQUIRE(r.step.breakdown.bubble_s < scenarios::kLargeBubbleShare * r.step_time_s);
    CHECK(zb_advice(scenarios::explain(sc, r)) == nullptr);
  }
  // Already zb-h1, or no pipeline: the knob has no value to try.
  for (const auto& sets : std::vector<std::vector<std::string>>{
           {"training.global_batch=8", "parallelism.schedule=zb-h1"},
           {"training.global_batch=8", "parallelism.pp=1", "parallelism.dp=8", "parallelism.zero_stage=1"}}) {
    const auto sc = scenarios::load_scenario_string(kDeepPipeline, "deep.yaml", sets);
    const auto c = scenarios::advice_candidates(sc);
    CHECK(std::none_of(c.begin(), c.end(), [](const std::string& s) { return s.find("zb-h1") != std::string::npos; }));
  }
}

TEST_CASE("MoE advice searches EP, the dispatcher and A2A overlap, and each change loads and simulates as advised", "[scenarios][explain][advice][moe]") {
  const std::string file = "gpt_oss_120b_64xh100.yaml";
  const auto sc = scenarios::load_scenario_file(kDir + file);
  const auto c = scenarios::advice_candidates(sc);
  auto has = [&](const std::string& s) { return std::find(c.begin(), c.end(), s) != c.end(); };
  CHECK(has("parallelism.ep 64 → 8 (EP group 8 GPUs, NVLink domain 8)"));
  CHECK(has("parallelism.ep 64 → 32 (EP group 32 GPUs, NVLink domain 8)"));
  CHECK_FALSE(has("parallelism.ep 64 → 3 (EP group 3 GPUs, NVLink domain 8)"));  // 3 divides neither 128 experts nor 64
  CHECK(has("training.moe_a2a_overlap false → true"));
  CHECK(has("training.moe_dispatcher alltoall → deepep"));
  // The advised single changes, re-applied through the loader's --set path, simulate to the advised MFU.
  const auto r = scenarios::simulate(sc);
  const auto ex = scenarios::explain(sc, r);
  const std::map<std::string, std::string> as_set = {{"training.moe_a2a_overlap false → true", "training.moe_a2a_overlap=true"},
                                                     {"training.moe_dispatcher alltoall → deepep", "training.moe_dispatcher=deepep"}};
  int checked = 0;
  for (const auto& a : ex.advice) {
    const auto it = as_set.find(a.change);
    if (it == as_set.end()) continue;
    INFO(a.change);
    CHECK(scenarios::simulate(scenarios::load_scenario_file(kDir + file, {it->second})).mfu == Approx(a.mfu_after).epsilon(1e-9));
    ++checked;
  }
  CHECK(checked == 2);
  // Dense models get no MoE knob.
  for (const auto& d : scenarios::advice_candidates(scenarios::load_scenario_file(kDir + "7b_256xh100.yaml")))
    CHECK(d.rfind("parallelism.ep", 0) != 0);
}

TEST_CASE("A2A overlap is advised only where Megatron-Core accepts it", "[scenarios][explain][advice][moe]") {
  // Qwen3-235B on GB200 runs pp 8 with vpp 3: overlap allowed; with vpp 1 Megatron asks for virtual stages.
  const std::string file = "qwen3_235b_256xgb200.yaml";
  const auto sc = scenarios::load_scenario_file(kDir + file, {"training.moe_a2a_overlap=false"});
  CHECK(scenarios::a2a_overlap_refusal(sc.model, sc.parallel, sc.training).empty());
  const auto flat = scenarios::load_scenario_file(kDir + file, {"training.moe_a2a_overlap=false", "parallelism.vpp=1",
                                                                "parallelism.schedule=1f1b"});
  CHECK(scenarios::a2a_overlap_refusal(flat.model, flat.parallel, flat.training) ==
        "with pp = 8 needs virtual stages (vpp > 1), as Megatron requires");
  const auto c = scenarios::advice_candidates(flat);
  CHECK(std::find(c.begin(), c.end(), "training.moe_a2a_overlap false → true") == c.end());
  const auto full = scenarios::load_scenario_file(kDir + file, {"training.moe_a2a_overlap=false", "training.recompute=full"});
  CHECK(scenarios::a2a_overlap_refusal(full.model, full.parallel, full.training) ==
        "cannot run with recompute: full (Megatron disables it)");
  const auto gather = scenarios::load_scenario_file(kDir + file, {"training.moe_a2a_overlap=false", "training.moe_dispatcher=allgather"});
  CHECK(scenarios::a2a_overlap_refusal(gather.model, gather.parallel, gather.training) ==
        "needs moe_dispatcher alltoall or deepep (Megatron: alltoall or flex), not allgather");
}

}}  // namespace CLUSTERSIM_TEST_ID
