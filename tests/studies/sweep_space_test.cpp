#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "scenarios/error.hpp"
#include "studies/sweep_space.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::studies;
using clustersim::scenarios::ScenarioError;
using Strings = std::vector<std::string>;

TEST_CASE("vary values: lists and ranges", "[tools][sweep]") {
  CHECK(parse_values("1,2,4", "t") == Strings{"1", "2", "4"});
  CHECK(parse_values("none,full", "t") == Strings{"none", "full"});
  CHECK(parse_values("1..8", "t") == Strings{"1", "2", "4", "8"});
  CHECK(parse_values("1..10", "t") == Strings{"1", "2", "4", "8"});
  CHECK(parse_values("3..24", "t") == Strings{"3", "6", "12", "24"});
  CHECK(parse_values("256..4096:x2", "t") == Strings{"256", "512", "1024", "2048", "4096"});
  CHECK(parse_values("1..100:x10", "t") == Strings{"1", "10", "100"});
  CHECK(parse_values("0..10:+5", "t") == Strings{"0", "5", "10"});
  CHECK(parse_values("0.5..2", "t") == Strings{"0.5", "1", "2"});
  CHECK(parse_values("1e12..4e12:+1e12", "t") == Strings{"1000000000000", "2000000000000", "3000000000000", "4000000000000"});
  CHECK(parse_values("1,16..64", "t") == Strings{"1", "16", "32", "64"});
}

TEST_CASE("vary rejects malformed ranges with a reason", "[tools][sweep]") {
  CHECK_THROWS_AS(parse_values("8..1", "t"), ScenarioError);
  CHECK_THROWS_AS(parse_values("a..8", "t"), ScenarioError);
  CHECK_THROWS_AS(parse_values("1..8:x1", "t"), ScenarioError);
  CHECK_THROWS_AS(parse_values("0..8:x2", "t"), ScenarioError);
  CHECK_THROWS_AS(parse_values("1..8:+0", "t"), ScenarioError);
  CHECK_THROWS_AS(parse_values("1..8:y2", "t"), ScenarioError);
  CHECK_THROWS_AS(parse_values("1,,2", "t"), ScenarioError);
  CHECK_THROWS_WITH(parse_axis("training.micro_batch=4..1"), Catch::Contains("--vary training.micro_batch"));
  CHECK_THROWS_AS(parse_axis("=1,2"), ScenarioError);
  CHECK_THROWS_AS(parse_axis("training.micro_batch="), ScenarioError);
}

TEST_CASE("the space is the cartesian product, last axis fastest", "[tools][sweep]") {
  const SweepSpace space({{"a.x", {"1", "2"}}, {"b.y", {"p", "q", "r"}}}, false, {"c.z=7"}, 8);
  REQUIRE(space.size() == 6);
  CHECK(space.columns() == Strings{"a.x", "b.y"});
  CHECK(space.at(0).overrides.assignments() == Strings{"c.z=7", "a.x=1", "b.y=p"});
  CHECK(space.at(1).values == Strings{"1", "q"});
  CHECK(space.at(5).values == Strings{"2", "r"});
  std::set<Strings> seen;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    CHECK(space.at(i).index == i);
    seen.insert(space.at(i).values);
  }
  CHECK(seen.size() == 6);
}

TEST_CASE("a key may not be both varied and fixed, nor varied twice", "[tools][sweep]") {
  CHECK_THROWS_AS(SweepSpace({{"a.x", {"1"}}}, false, {"a.x=2"}, 8), ScenarioError);
  CHECK_THROWS_AS(SweepSpace({{"a.x", {"1"}}, {"a.x", {"2"}}}, false, {}, 8), ScenarioError);
  CHECK_THROWS_AS(SweepSpace({{"parallelism.tp", {"1"}}}, true, {}, 8), ScenarioError);
}

TEST_CASE("auto-parallel plans divide the GPU count, vpp only with pp", "[tools][sweep]") {
  PlanGrid g;
  g.tp = {1, 2};
  g.pp = {1, 2};
  g.cp = {1};
  g.vpp = {1, 2};
  g.micro_batch = {1};
  g.zero_stage = {0};
  g.recompute = {"none"};
  // 2 GPUs: (tp, pp) = (1,1), (1,2) with vpp 1 (1f1b and zb-h1) or 2 (interleaved, dualpipev,
  // zbv), (2,1); tp2·pp2 = 4 does not divide 2.
  const auto plans = auto_parallel_plans(2, g);
  REQUIRE(plans.size() == 7);
  int interleaved = 0;
  for (const auto& p : plans) {
    const int tp = std::stoi(p.values[0]), pp = std::stoi(p.values[1]), vpp = std::stoi(p.values[3]);
    CHECK(2 % (tp * pp) == 0);
    CHECK((vpp == 1 || pp > 1));
    const auto sets = p.overrides.assignments();
    const bool has_vpp = std::find(sets.begin(), sets.end(), "parallelism.vpp=2") != sets.end();
    CHECK(has_vpp == (vpp == 2));
    if (has_vpp) {  // two chunks per rank: the interleaved schedule or a V-shaped one
      const bool v = std::find(sets.begin(), sets.end(), "parallelism.schedule=dualpipev") != sets.end() ||
                     std::find(sets.begin(), sets.end(), "parallelism.schedule=zbv") != sets.end();
      interleaved += !v;
      CHECK((v || std::find(sets.begin(), sets.end(), "parallelism.schedule=interleaved") != sets.end()));
    }
  }
  CHECK(interleaved == 1);
  // The default grid for 1024 GPUs: every tp·pp·cp divides 1024 except those above it.
  const auto all = auto_parallel_plans(1024, PlanGrid{});
  CHECK(all.size() > 10000);
}

TEST_CASE("auto-parallel follows a varied GPU count, and --set fixes a plan dimension", "[tools][sweep]") {
  PlanGrid g;
  g.tp = {1, 2};
  g.pp = {1, 2};
  g.cp = {1};
  g.vpp = {1};
  g.micro_batch = {1, 2};
  g.zero_stage = {0};
  g.recompute = {"none"};
  // 1 GPU: tp=pp=1, 2 micro-batch sizes; 2 GPUs: (1,1) and (2,1) × 2, (1,2) × 2 schedules × 2.
  const SweepSpace space({{"cluster.gpus", {"1", "2"}}}, true, {}, 64, g);
  REQUIRE(space.size() == 2 + 8);
  CHECK(space.at(0).values.front() == "1");
  CHECK(space.at(1).values.front() == "1");
  CHECK(space.at(2).values.front() == "2");
  CHECK(space.at(9).values.front() == "2");
  CHECK(space.columns().size() == 1 + plan_keys().size());
  const SweepSpace fixed({{"cluster.gpus", {"1", "2"}}}, true, {"training.micro_batch=2"}, 64, g);
  CHECK(fixed.size() == 1 + 4);
  // A fixed schedule is the one schedule of the pipelined plans; pp 1 plans stay.
  const SweepSpace one({{"cluster.gpus", {"1", "2"}}}, true, {"parallelism.schedule=zb-h1"}, 64, g);
  CHECK(one.size() == 2 + 6);
}

TEST_CASE("shards are disjoint and together complete", "[tools][sweep]") {
  for (std::uint64_t total : {0, 1, 7, 100, 1001})
    for (std::uint64_t n : {1, 2, 3, 8, 2000}) {
      std::vector<int> hits(total, 0);
      for (std::uint64_t i = 0; i < n; ++i) {
        const Shard s{i, n};
        for (std::uint64_t j = 0; j < s.size(total); ++j) {
          REQUIRE(s.global(j) < total);
          ++hits[s.global(j)];
        }
      }
      for (std::uint64_t k = 0; k < total; ++k) REQUIRE(hits[k] == 1);
    }
  CHECK(parse_shard("3/16").index == 3);
  CHECK(parse_shard("3/16").count == 16);
  CHECK_THROWS_AS(parse_shard("16/16"), ScenarioError);
  CHECK_THROWS_AS(parse_shard("1"), ScenarioError);
  CHECK_THROWS_AS(parse_shard("-1/4"), ScenarioError);
}

TEST_CASE("the pipeline schedule is a plan dimension where it applies", "[tools][sweep]") {
  PlanGrid g;
  g.tp = {1};
  g.pp = {1, 4};
  g.cp = {1};
  g.layers = 32;  // pp 4: vpp 1, 2, 4, 8
  g.micro_batch = {1};
  g.zero_stage = {0};
  g.recompute = {"none"};
  const std::size_t col = std::size_t(std::find(plan_keys().begin(), plan_keys().end(), "parallelism.schedule") -
                                      plan_keys().begin());
  REQUIRE(col < plan_keys().size());
  auto schedules_of = [&](const PlanGrid& grid) {
    std::vector<std::pair<std::string, std::string>> out;  // (pp/vpp, schedule)
    for (const auto& p : auto_parallel_plans(4, grid)) {
      out.emplace_back(p.values[1] + "/" + p.values[3], p.values[col]);
      // The column is the override the scenario gets.
      CHECK(std::ranges::count(p.overrides.assignments(), "parallelism.schedule=" + p.values[col]) == 1);
    }
    return out;
  };
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  // zb-h1 only at vpp 1 (models::check_schedule refuses it with vpp > 1); interleaved only at vpp > 1;
  // the V schedules (dualpipev, zbv) only at vpp 2.
  CHECK(schedules_of(g) == Pairs{{"1/1", "1f1b"}, {"4/1", "1f1b"}, {"4/1", "zb-h1"}, {"4/2", "interleaved"},
                                 {"4/2", "dualpipev"}, {"4/2", "zbv"}, {"4/4", "interleaved"}, {"4/8", "interleaved"}});
  g.schedules = parse_schedules("zb-h1,1f1b", "--schedules");
  CHECK(schedules_of(g) == Pairs{{"1/1", "1f1b"}, {"4/1", "1f1b"}, {"4/1", "zb-h1"}});
  g.schedules = parse_schedules("interleaved", "--schedules");
  CHECK(schedules_of(g) == Pairs{{"1/1", "1f1b"}, {"4/2", "interleaved"}, {"4/4", "interleaved"}, {"4/8", "interleaved"}});
  g.schedules = parse_schedules("gpipe", "--schedules");
  CHECK(schedules_of(g) == Pairs{{"1/1", "1f1b"}, {"4/1", "gpipe"}});
  for (const char* bad : {"", "zb", "1f1b,", "1f1b,1f1b", "ZB-H1", "zb-h1 "})
    CHECK_THROWS_WITH(parse_schedules(bad, "--schedules"), Catch::Contains("--schedules"));
  CHECK_THROWS_WITH(parse_schedules("zbh1", "--schedules"), Catch::Contains("allowed: 1f1b, gpipe, interleaved, zb-h1"));
  // Varying it under --auto-parallel is refused like every other plan key.
  CHECK_THROWS_AS(SweepSpace({{"parallelism.schedule", {"1f1b", "zb-h1"}}}, true, {}, 8, g), ScenarioError);
}

}}  // namespace CLUSTERSIM_TEST_ID
