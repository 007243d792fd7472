// The planner's search (issue 16): vpp per pipeline depth, the batch range, costs and energy,
// and a result that does not depend on the order hardware is named in.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "scenarios/error.hpp"
#include "studies/error_band.hpp"
#include "studies/plan_batch.hpp"
#include "studies/plan_costs.hpp"
#include "studies/plan_search.hpp"
#include "studies/sweep_space.hpp"
#include "studies/sweep_table.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::studies;
using clustersim::scenarios::ScenarioError;

TEST_CASE("vpp values follow the layers: pp·vpp divides them, or them plus embedding and loss", "[studies][plan]") {
  // Llama 3 405B: 126 layers; 126 + 2 = 128 = 16 x 8, so pp 16 takes vpp 2 and 4 (8 would leave a
  // virtual stage without a layer: pp·vpp stays at most the layers).
  CHECK(vpp_values(126, 16, 8) == std::vector<int>{1, 2, 4});
  CHECK(vpp_values(126, 8, 8) == std::vector<int>{1, 2, 4, 8});
  // 80 layers (Llama 3 70B) at pp 8: 10 layers per stage split into 2 or 5 chunks; 82 = 2 x 41.
  CHECK(vpp_values(80, 8, 8) == std::vector<int>{1, 2, 5});
  CHECK(vpp_values(80, 4, 8) == std::vector<int>{1, 2, 4, 5});
  CHECK(vpp_values(32, 16, 8) == std::vector<int>{1, 2});  // pp·vpp never above the layers
  CHECK(vpp_values(32, 2, 4) == std::vector<int>{1, 2, 4}); // the bound holds
  PlanGrid g;
  g.tp = {1};
  g.pp = {1, 8};
  g.cp = {1};
  g.micro_batch = {1};
  g.zero_stage = {0};
  g.recompute = {"none"};
  g.layers = 80;
  std::vector<int> seen;
  for (const auto& p : auto_parallel_plans(8, g))
    if (p.values[1] == "8") seen.push_back(std::stoi(p.values[3]));
  CHECK(seen == std::vector<int>{1, 1, 2, 2, 2, 5});  // vpp 1 under 1f1b and zb-h1, 2 under interleaved, dualpipev, zbv
  // A fixed vpp is searched as given, whatever the layers.
  REQUIRE(fix_plan_dimension(&g, "parallelism.vpp", "3"));
  seen.clear();
  for (const auto& p : auto_parallel_plans(8, g))
    if (p.values[1] == "8") seen.push_back(std::stoi(p.values[3]));
  CHECK(seen == std::vector<int>{3});
}

TEST_CASE("a batch range in tokens gives the round batches within it", "[studies][plan]") {
  const TokenRange r = parse_batch_tokens("4M..16M");
  CHECK(r.lo == 4194304);
  CHECK(r.hi == 16777216);
  CHECK(candidate_batches(r, 8192) == std::vector<int>{512, 768, 1024, 1536, 2048});
  // 244.1 to 249.0 sequences hold no 2^a nor 3·2^a: the largest whole batch.
  CHECK(candidate_batches(parse_batch_tokens("1000000..1020000"), 4096) == std::vector<int>{249});
  CHECK(parse_batch_tokens("512k").hi == 524288);
  for (const char* bad : {"16M..4M", "4X", "", "..4M", "-1M..2M", "4M..", "0"})
    CHECK_THROWS_WITH(parse_batch_tokens(bad), Catch::Contains("--batch-tokens"));
  CHECK_THROWS_AS(candidate_batches(parse_batch_tokens("100..200"), 4096), ScenarioError);  // no whole sequence
}

TEST_CASE("costs: GPU-hours at each hardware's price plus energy at board power, host share and PUE", "[studies][plan]") {
  const auto prices = parse_gpu_hour_prices("h100-sxm=2.5,gb200=6");
  CHECK(gpu_hour_price(prices, "gb200") == 6);
  CHECK(gpu_hour_price(prices, "b200") == 0);
  CHECK(gpu_hour_price(parse_gpu_hour_prices("3"), "b200") == 3);
  CHECK_THROWS_WITH(check_gpu_hour_prices(prices, {"h100-sxm", "gb200", "b200"}), Catch::Contains("no price for b200"));
  CHECK_NOTHROW(check_gpu_hour_prices(prices, {"h100-sxm"}));
  CHECK_NOTHROW(check_gpu_hour_prices(prices, {"gb200", "h100-sxm"}));
  for (const char* bad : {"h100-sxm=", "=2", "2,3", "a=1,a=2", "x", "-1"})
    CHECK_THROWS_WITH(parse_gpu_hour_prices(bad), Catch::Contains("--cost-per-gpu-hour"));
  // DGX H100: 10.2 kW for 8 x 700 W GPUs, so 1275 W per GPU.
  EnergyOptions e;
  e.pue = 1.25;
  e.price_per_kwh = 0.1;
  const PlanCosts c = plan_costs(1000, 700, 2.5, e);
  CHECK(c.it_w_per_gpu == Approx(1275));
  CHECK(c.energy_mwh == Approx(1.59375));  // 1000 h x 1275 W x 1.25
  CHECK(c.gpu_cost_usd == Approx(2500));
  CHECK(c.energy_cost_usd == Approx(159.375));
  CHECK(c.total_cost_usd == Approx(2659.375));
  e.node_overhead_w = 300;
  CHECK(plan_costs(1, 1000, 0, e).it_w_per_gpu == Approx(1300));
  CHECK(plan_costs(1, 0, 2, e).energy_mwh == 0);  // a profile without power: no energy figure
  e.pue = 0.9;
  CHECK_THROWS_WITH(check_energy_options(e), Catch::Contains("--pue"));
}

namespace {

PlanRequest small_request(std::vector<std::string> hardware) {
  PlanRequest r;
  r.model = "gpt3-1.3b";
  r.tokens = 3e11;
  r.days = 30;
  r.hardware = std::move(hardware);
  r.fixes = {"parallelism.tp=1", "parallelism.pp=1", "parallelism.cp=1", "parallelism.zero_stage=1"};
  r.prices = parse_gpu_hour_prices("h100-sxm=2.5,a100-80gb=1.5,b200=5");
  r.max_gpus = 32;
  r.top = 4;
  r.threads = 2;
  return r;
}

std::vector<std::string> summary(const PlanResult& res) {
  std::vector<std::string> out;
  for (const auto& c : res.cheapest)
    out.push_back(c.hardware + " " + std::to_string(c.gpus) + " " + std::to_string(c.index) + " " + std::to_string(c.days));
  for (const auto& c : res.fastest_per_gpu_count)
    out.push_back(c.hardware + " " + std::to_string(c.gpus) + " " + std::to_string(c.index));
  out.push_back(std::to_string(res.stats.ok) + " " + std::to_string(res.stats.pruned) + " " + std::to_string(res.stats.evaluated));
  return out;
}

}  // namespace

TEST_CASE("the plan does not depend on the order hardware is named in", "[studies][plan]") {
  std::vector<std::string> hw{"a100-80gb", "b200", "h100-sxm"};
  const auto first = summary(search_plans(small_request(hw)));
  REQUIRE(first.size() > 3);
  while (std::next_permutation(hw.begin(), hw.end())) {
    INFO(hw[0] << "," << hw[1] << "," << hw[2]);
    CHECK(summary(search_plans(small_request(hw))) == first);
  }
  CHECK_THROWS_WITH(search_plans(small_request({"b200", "b200"})), Catch::Contains("listed twice"));
}

TEST_CASE("each hardware gets its own GPU step, and the cheapest plans are ranked by total cost", "[studies][plan]") {
  PlanRequest r = small_request({"gb200", "h100-sxm"});
  r.prices = parse_gpu_hour_prices("h100-sxm=2.5,gb200=6");
  r.max_gpus = 144;
  const PlanResult res = search_plans(r);
  // NVL72 racks are allocated in 4-GPU compute trays (the loader then gives each size its
  // launchers' segment of the racks); a 72-GPU step left no size a power-of-two layout could form.
  for (int g : res.sizes_by_hardware.at("gb200")) CHECK(g % 4 == 0);
  CHECK(res.sizes_by_hardware.at("gb200").count(128) == 1);
  for (int g : res.sizes_by_hardware.at("h100-sxm")) CHECK(g % 8 == 0);  // DGX H100
  CHECK(res.sizes_by_hardware.at("h100-sxm").count(16) == 1);  // not lost to the NVL72 step
  REQUIRE(res.cheapest.size() > 1);
  for (std::size_t i = 1; i < res.cheapest.size(); ++i)
    CHECK(res.cheapest[i - 1].costs.total_cost_usd <= res.cheapest[i].costs.total_cost_usd);
  for (const auto& c : res.cheapest) {
    CHECK(c.costs.gpu_cost_usd == Approx(c.gpu_hours * (c.hardware == "gb200" ? 6 : 2.5)));
    CHECK(c.costs.energy_mwh > 0);
  }
}

TEST_CASE("plans meeting the deadline ranked by GPUs or by days (--by)", "[studies][plan]") {
  PlanRequest r = small_request({"h100-sxm"});
  r.rank = PlanRank::gpus;
  PlanResult res = search_plans(r);
  REQUIRE(res.cheapest.size() > 1);
  for (std::size_t i = 1; i < res.cheapest.size(); ++i) CHECK(res.cheapest[i - 1].gpus <= res.cheapest[i].gpus);
  r.rank = PlanRank::days;
  res = search_plans(r);
  REQUIRE(res.cheapest.size() > 1);
  for (std::size_t i = 1; i < res.cheapest.size(); ++i) CHECK(res.cheapest[i - 1].days <= res.cheapest[i].days);
  CHECK(res.cheapest.front().days == Approx(std::min_element(res.fastest_per_gpu_count.begin(), res.fastest_per_gpu_count.end(),
                                                             [](const auto& x, const auto& y) { return x.days < y.days; })->days));
  CHECK_THROWS_WITH(parse_plan_rank("speed"), Catch::Contains("--by speed"));
}

TEST_CASE("a batch range: the search picks a batch in it, and a larger batch can beat the default", "[studies][plan]") {
  PlanRequest r = small_request({"h100-sxm"});
  r.batch_tokens_lo = 1 << 20;
  r.batch_tokens_hi = 1 << 22;
  const PlanResult res = search_plans(r);
  CHECK(res.batches == std::vector<int>{256, 384, 512, 768, 1024});
  REQUIRE(!res.cheapest.empty());
  std::set<int> chosen;
  for (const auto& c : res.cheapest) {
    CHECK(c.global_batch >= 256);
    CHECK(c.global_batch <= 1024);
    const int dp = c.gpus;  // tp = pp = cp = 1
    CHECK(c.global_batch % dp == 0);
    // days follow the chosen batch: steps = tokens / (batch x seq)
    CHECK(c.days == Approx(3e11 / (double(c.global_batch) * 4096) * c.step_time.si() / 86400).epsilon(0.01));  // plus checkpoints
    chosen.insert(c.global_batch);
  }
  CHECK(res.unformable > 0);  // combinations that dp·micro_batch does not divide are not plans
  r.global_batch = 512;
  CHECK_THROWS_WITH(search_plans(r), Catch::Contains("--batch-tokens"));
}

TEST_CASE("the vpp search by layers keeps the auto-parallel grid bounded", "[studies][plan]") {
  // 7B (32 layers) on 256 GPUs and 70B (80 layers) on 1024: the grid with every fitting vpp up to
  // 8 stays within 1.5x the fixed {1, 2, 4} grid (vpp is only searched where pp·vpp fits).
  for (const auto& [gpus, layers] : {std::pair{256, 32}, std::pair{1024, 80}, std::pair{16384, 126}}) {
    PlanGrid fixed, by_layers;
    by_layers.layers = layers;
    const auto n_fixed = auto_parallel_plans(gpus, fixed).size(), n_layers = auto_parallel_plans(gpus, by_layers).size();
    INFO(gpus << " GPUs, " << layers << " layers: " << n_fixed << " plans with vpp 1, 2, 4; " << n_layers << " by layers");
    CHECK(n_layers <= n_fixed * 3 / 2);
  }
}

TEST_CASE("with a confidence, the deadline must hold at the pessimistic end of each plan's error band", "[studies][plan]") {
  PlanRequest r = small_request({"h100-sxm"});
  const PlanResult plain = search_plans(r);
  REQUIRE(!plain.cheapest.empty());
  CHECK(plain.cheapest.front().days_high > plain.cheapest.front().days);  // the default band is still shown
  r.confidence = 0.9;
  const PlanResult banded = search_plans(r);
  REQUIRE(!banded.cheapest.empty());
  for (const auto& c : banded.cheapest) {
    CHECK(c.days_high <= r.days);
    CHECK(c.days_high > c.days);
    CHECK(!c.band_basis.empty());
  }
  // A deadline the expected days meet but the band's high end does not: that plan drops out.
  r.days = banded.cheapest.front().days * 1.001;
  r.confidence = 0;
  r.top = 100;  // it now ranks after the plans meeting the deadline at the 68 % band's high end
  const auto at_expected = search_plans(r);
  r.confidence = 0.9;
  const auto at_pessimistic = search_plans(r);
  const auto has = [&](const PlanResult& res) {
    return std::any_of(res.cheapest.begin(), res.cheapest.end(),
                       [&](const PlanCandidate& c) { return c.index == banded.cheapest.front().index; });
  };
  CHECK(has(at_expected));
  CHECK(!has(at_pessimistic));
  for (const auto& c : at_pessimistic.cheapest) CHECK(c.days_high <= r.days);
  r.confidence = 1.5;
  CHECK_THROWS_WITH(search_plans(r), Catch::Contains("--confidence"));
}

TEST_CASE("without --confidence every plan shows its band, and plans meeting the deadline at its high end rank first",
          "[studies][plan]") {
  PlanRequest r = small_request({"h100-sxm"});
  r.top = 20;
  const PlanResult first = search_plans(r);
  REQUIRE(first.cheapest.size() >= 2);
  // A deadline between the cheapest plan's expected days and its band's high end: it still meets
  // the deadline as expected, but ranks after every plan that meets it at the high end.
  const PlanCandidate cheapest = first.cheapest.front();
  REQUIRE(cheapest.days_high > cheapest.days);
  r.days = (cheapest.days + cheapest.days_high) / 2;
  const PlanResult res = search_plans(r);
  REQUIRE(!res.cheapest.empty());
  CHECK(band_confidence(r) == kDefaultBandConfidence);
  bool seen_miss = false, meets_after_miss = false, cheapest_listed = false;
  for (const auto& c : res.cheapest) {
    CHECK(c.days <= r.days);
    CHECK(c.days_high > c.days);
    CHECK(!c.band_basis.empty());
    if (c.days_high > r.days) seen_miss = true;
    else if (seen_miss) meets_after_miss = true;
    cheapest_listed = cheapest_listed || c.index == cheapest.index;
  }
  CHECK(!meets_after_miss);
  if (cheapest_listed && res.cheapest.front().days_high <= r.days) CHECK(res.cheapest.front().index != cheapest.index);
  CHECK(res.cheapest.front().days_high <= r.days);
}

namespace {

// One pipelined plan, every dimension but the schedule fixed (so the search weighs 1f1b against
// zb-h1 on the same stages and micro-batches).
PlanRequest one_plan_request(const std::string& model, int gpus, int tp, int pp, int seq_len, int global_batch,
                             int zero) {
  PlanRequest r;
  r.model = model;
  r.tokens = 1e10;
  r.days = 1000;
  r.seq_len = seq_len;
  r.global_batch = global_batch;
  r.threads = 2;
  r.keep_all_rows = true;
  r.fixes = {"cluster.gpus=" + std::to_string(gpus), "parallelism.tp=" + std::to_string(tp),
             "parallelism.pp=" + std::to_string(pp), "parallelism.cp=1", "parallelism.vpp=1", "training.micro_batch=1",
             "parallelism.zero_stage=" + std::to_string(zero), "training.recompute=none"};
  return r;
}

std::string cell(const PlanResult& res, const std::vector<std::string>& row, const char* col) {
  return row.at(*column_of(res.header, col));
}

}  // namespace

TEST_CASE("the plan search picks zb-h1 where its bubble saving wins and memory allows it", "[studies][plan][zb]") {
  // Llama 2 7B on 8 H100, pp 8 (4 layers a stage) and only 8 micro-batches: 1F1B idles 7 of 15
  // pass slots per stage; the split backward fills most of them; 26 GiB of 80 per GPU.
  PlanRequest req = one_plan_request("llama2-7b", 8, 1, 8, 2048, 8, 0);
  req.schedules = {"1f1b", "zb-h1", "interleaved"};  // zb-h1 is opt-in in plan
  const PlanResult res = search_plans(req);
  REQUIRE(res.cheapest.size() == 2);  // the two schedules of the one plan, both simulated
  CHECK(cell(res, res.cheapest[0].cells, "parallelism.schedule") == "zb-h1");
  CHECK(cell(res, res.cheapest[1].cells, "parallelism.schedule") == "1f1b");
  CHECK(res.cheapest[0].step_time.si() < 0.9 * res.cheapest[1].step_time.si());
  // Its step time is what a run of the same plan with the schedule set gives.
  const std::string yaml =
      "name: zb\nmodel: llama2-7b\nhardware: h100-sxm\ncluster: {gpus: 8}\n"
      "training: {seq_len: 2048, global_batch: 8, tokens: 1e10}\n";
  const std::vector<std::string> plan = {"parallelism.pp=8", "training.micro_batch=1", "parallelism.zero_stage=0",
                                         "training.recompute=none"};
  for (const auto& c : res.cheapest) {
    auto sets = plan;
    sets.push_back("parallelism.schedule=" + cell(res, c.cells, "parallelism.schedule"));
    const auto run = clustersim::scenarios::simulate(clustersim::scenarios::load_scenario_string(yaml, "zb.yaml", sets));
    CHECK(c.step_time.si() == Approx(run.step_time_s).epsilon(1e-9));
  }
  // The default list and --schedules 1f1b: the same search without zb-h1 answers with the 1F1B
  // plan, and the answer says zb-h1 was not searched.
  const PlanResult by_default = search_plans(one_plan_request("llama2-7b", 8, 1, 8, 2048, 8, 0));
  REQUIRE(by_default.cheapest.size() == 1);
  CHECK(by_default.cheapest[0].cells == res.cheapest[1].cells);
  CHECK(std::any_of(by_default.notes.begin(), by_default.notes.end(),
                    [](const std::string& n) { return n.find("zb-h1") != std::string::npos; }));
  PlanRequest only = one_plan_request("llama2-7b", 8, 1, 8, 2048, 8, 0);
  only.schedules = {"1f1b"};
  const PlanResult without = search_plans(only);
  REQUIRE(without.cheapest.size() == 1);
  CHECK(without.cheapest[0].cells == res.cheapest[1].cells);
}

TEST_CASE("the plan search does not pick zb-h1 when what it holds for W does not fit", "[studies][plan][zb]") {
  // Llama 3 70B on 32 H100, TP 8 with SP, pp 4, seq 8192, 8 micro-batches: zb-h1 keeps each
  // wgrad's gathered X and dY from B to W and needs ~97 GiB of 80, while 1F1B fits in ~61.
  PlanRequest req = one_plan_request("llama3-70b", 32, 8, 4, 8192, 8, 1);
  req.schedules = {"1f1b", "zb-h1", "interleaved"};
  const PlanResult res = search_plans(req);
  REQUIRE(res.cheapest.size() == 1);
  CHECK(cell(res, res.cheapest[0].cells, "parallelism.schedule") == "1f1b");
  int zb_rows = 0;
  for (const auto& row : res.all_rows)
    if (cell(res, row, "parallelism.schedule") == "zb-h1") {
      ++zb_rows;
      CHECK(cell(res, row, "status") == "out_of_memory");
    }
  CHECK(zb_rows == 1);
  // Memory is the reason: simulated anyway, zb-h1 would be the faster step.
  const std::string yaml =
      "name: zb\nmodel: llama3-70b\nhardware: h100-sxm\ncluster: {gpus: 32}\n"
      "parallelism: {tp: 8, pp: 4, sequence_parallel: true, zero_stage: 1}\n"
      "training: {seq_len: 8192, global_batch: 8, micro_batch: 1, recompute: none, tokens: 1e10}\n";
  const auto zb = clustersim::scenarios::simulate(
      clustersim::scenarios::load_scenario_string(yaml, "zb.yaml", {"parallelism.schedule=zb-h1"}));
  CHECK_FALSE(zb.memory.fits());
  CHECK(zb.step_time_s < res.cheapest[0].step_time.si());
}

TEST_CASE("plans with the same figures that differ only in a setting with no effect take one row", "[studies][plan]") {
  // Under pipelining ZeRO-1 and ZeRO-2 twins predict the same step time, memory and cost.
  PlanRequest r = small_request({"h100-sxm"});
  r.fixes = {"parallelism.tp=1", "parallelism.pp=2", "parallelism.cp=1"};
  r.prices = {};
  r.top = 6;
  const PlanResult res = search_plans(r);
  REQUIRE(res.cheapest.size() == 6);
  const std::size_t zero = *column_of(res.header, "parallelism.zero_stage");
  std::size_t twins = 0;
  for (std::size_t i = 0; i < res.cheapest.size(); ++i) {
    const auto& c = res.cheapest[i];
    for (std::size_t j = i + 1; j < res.cheapest.size(); ++j) CHECK(!same_figures(c, res.cheapest[j]));
    for (const auto& e : c.equivalents) {
      CHECK(e[zero] != c.cells[zero]);
      CHECK(e[*column_of(res.header, "step_time_s")] == c.cells[*column_of(res.header, "step_time_s")]);
      ++twins;
    }
  }
  CHECK(twins >= 2);
  // The exhaustive search, which simulates every plan, finds the same rows and the same twins.
  r.exhaustive = true;
  const PlanResult all = search_plans(r);
  REQUIRE(all.cheapest.size() == res.cheapest.size());
  for (std::size_t i = 0; i < all.cheapest.size(); ++i) {
    CHECK(all.cheapest[i].index == res.cheapest[i].index);
    CHECK(all.cheapest[i].equivalents == res.cheapest[i].equivalents);
  }
}

TEST_CASE("a global batch that leaves no gradient accumulation is named as the binding constraint", "[studies][plan]") {
  PlanRequest r = small_request({"h100-sxm"});
  r.fixes = {"parallelism.pp=1", "parallelism.cp=1"};
  r.prices = {};
  r.max_gpus = 0;
  r.global_batch = 16;  // 64 Ki tokens: at most 16 data-parallel replicas
  r.days = 1;           // out of reach without more replicas
  const PlanResult tight = search_plans(r);
  CHECK(tight.cheapest.empty());
  const std::string note = batch_binding_note(r, tight);
  CHECK(note.find("the global batch binds: the fastest plan (") == 0);
  CHECK(note.find("= its whole batch of 16 sequences") != std::string::npos);
  CHECK(note.find("try --batch-tokens 64k..256k") != std::string::npos);
  // The default 4 Mi-token batch leaves accumulation to spare: no note.
  PlanRequest easy = small_request({"h100-sxm"});
  const PlanResult roomy = search_plans(easy);
  REQUIRE(!roomy.cheapest.empty());
  CHECK(batch_binding_note(easy, roomy).empty());
}

}}  // namespace CLUSTERSIM_TEST_ID
