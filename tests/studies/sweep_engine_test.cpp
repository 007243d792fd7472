#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "scenarios/load.hpp"
#include "scenarios/scenario_template.hpp"
#include "scenarios/simulate.hpp"
#include "studies/metrics.hpp"
#include "studies/sweep_engine.hpp"
#include "studies/sweep_table.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using namespace clustersim::studies;

namespace {

const char* kSmall = R"(name: small
model: llama2-7b
hardware: h100-sxm
cluster: {gpus: 8}
parallelism: {zero_stage: 1}
training: {seq_len: 2048, global_batch: 64, recompute: full, tokens: 1e11}
)";

std::string sweep_csv(const SweepSpace& space, int threads, Shard shard = {}) {
  const scenarios::ScenarioTemplate base(kSmall, "small.yaml");
  SweepOptions opt;
  opt.threads = threads;
  opt.shard = shard;
  opt.jsonl = true;
  std::string out = csv_line(sweep_header(space));
  run_sweep(base, space, opt, [&](const Row& r) { out += csv_line(r.cells) + r.json + "\n"; });
  return out;
}

}  // namespace

TEST_CASE("a template instantiates exactly what the loader loads", "[tools][sweep]") {
  const scenarios::ScenarioTemplate t(kSmall, "small.yaml");
  for (const std::vector<std::string>& o : std::vector<std::vector<std::string>>{
           {}, {"training.micro_batch=2"}, {"model.layers=4", "hardware.memory=40GiB"}, {"hardware=b200"}}) {
    const auto a = scenarios::simulate(t.instantiate(o));
    const auto b = scenarios::simulate(scenarios::load_scenario_string(kSmall, "small.yaml", o));
    CHECK(metrics_json(report_metrics(a)) == metrics_json(report_metrics(b)));
  }
  CHECK(t.scalar_at("cluster.gpus") == std::optional<std::string>("8"));
  CHECK(!t.scalar_at("cluster.nothing"));
}

TEST_CASE("the sweep output is identical with 1 and N threads", "[tools][sweep]") {
  const SweepSpace space({{"training.micro_batch", {"1", "2", "3"}}, {"training.recompute", {"none", "full"}},
                          {"cluster.gpus", {"4", "8"}}},
                         false, {}, 8);
  const std::string one = sweep_csv(space, 1);
  CHECK(sweep_csv(space, 3) == one);
  CHECK(sweep_csv(space, 8) == one);
}

TEST_CASE("invalid and out-of-memory configurations are kept with their reason", "[tools][sweep]") {
  // micro_batch 3 does not divide the batch per rank (64 / 8 GPUs); 8 sequences of 2048 tokens
  // per micro-batch without recompute need more than 80 GiB; an A100 has no fp8.
  const SweepSpace space({{"training.micro_batch", {"1", "3", "8"}}}, false, {"training.recompute=none"}, 8);
  const scenarios::ScenarioTemplate base(kSmall, "small.yaml");
  const auto header = sweep_header(space);
  const std::size_t status = *column_of(header, "status"), reason = *column_of(header, "reason");
  const std::size_t mfu = *column_of(header, "mfu");
  std::vector<Row> rows;
  run_sweep(base, space, {}, [&](const Row& r) { rows.push_back(r); });
  REQUIRE(rows.size() == 3);
  for (const auto& r : rows) REQUIRE(r.cells.size() == header.size());
  CHECK(rows[0].cells[status] == "ok");
  CHECK(rows[0].cells[reason].empty());
  CHECK(std::stod(rows[0].cells[mfu]) > 0);
  CHECK(rows[1].cells[status] == "invalid");
  CHECK_THAT(rows[1].cells[reason], Catch::Contains("global_batch") && Catch::Contains("micro_batch"));
  CHECK(rows[1].cells[mfu].empty());
  CHECK(rows[2].cells[status] == "out_of_memory");
  CHECK_THAT(rows[2].cells[reason], Catch::Contains("does not fit in memory"));

  const SweepSpace fp8({{"training.precision", {"bf16", "fp8"}}}, false, {"hardware=a100-80gb"}, 8);
  std::vector<Row> r2;
  run_sweep(base, fp8, {}, [&](const Row& r) { r2.push_back(r); });
  REQUIRE(r2.size() == 2);
  CHECK(r2[0].status == Status::ok);
  CHECK(r2[1].status == Status::invalid);
  CHECK_THAT(r2[1].cells[reason], Catch::Contains("FP8"));
}

TEST_CASE("shards of a sweep add up to the whole sweep", "[tools][sweep]") {
  const SweepSpace space({{"training.micro_batch", {"1", "2", "3", "4"}}, {"training.recompute", {"none", "full"}}},
                         false, {}, 8);
  const scenarios::ScenarioTemplate base(kSmall, "small.yaml");
  std::vector<std::pair<std::uint64_t, std::string>> merged;
  for (std::uint64_t i = 0; i < 3; ++i) {
    SweepOptions opt;
    opt.shard = {i, 3};
    run_sweep(base, space, opt, [&](const Row& r) { merged.emplace_back(r.index, csv_line(r.cells)); });
  }
  std::sort(merged.begin(), merged.end());
  std::string whole, joined;
  run_sweep(base, space, {}, [&](const Row& r) { whole += csv_line(r.cells); });
  for (std::size_t i = 0; i < merged.size(); ++i) {
    CHECK(merged[i].first == i);
    joined += merged[i].second;
  }
  CHECK(joined == whole);
}

TEST_CASE("the step-time bound used to skip plans is below the simulated step time", "[tools][sweep]") {
  const scenarios::ScenarioTemplate base(kSmall, "small.yaml");
  for (const std::vector<std::string>& o : std::vector<std::vector<std::string>>{
           {}, {"training.micro_batch=2"}, {"training.recompute=none"}, {"training.recompute=selective"},
           {"cluster.gpus=2"}, {"hardware=b200", "training.seq_len=8192"}}) {
    const auto sc = base.instantiate(o);
    const double bound = step_time_lower_bound_s(sc);
    const double step = scenarios::simulate(sc).step_time_s;
    CHECK(bound > 0.5 * step);  // most of a data-parallel step is the layers' kernels
    CHECK(bound <= step);
  }
  for (const std::vector<std::string>& o : std::vector<std::vector<std::string>>{
           {"parallelism.pp=2"}, {"parallelism.pp=4", "parallelism.vpp=2", "parallelism.schedule=interleaved"},
           {"parallelism.pp=8", "parallelism.schedule=gpipe"}, {"parallelism.tp=2", "parallelism.sequence_parallel=true"},
           {"parallelism.cp=2"}, {"parallelism.tp=4", "parallelism.pp=2", "parallelism.zero_stage=3"}}) {
    const auto sc = base.instantiate(o);
    CHECK(step_time_lower_bound_s(sc) <= scenarios::simulate(sc).step_time_s);
  }
}

// ZeRO-2 runs ZeRO-1's step under pipelining with overlapped gradient reduction
// (models::step_zero_stage): the sweep simulates such a pair once, and every row still equals the
// report of its own configuration loaded and simulated alone (its memory, its zero_stage).
TEST_CASE("a sweep simulates a ZeRO-1/ZeRO-2 pair once and reports each as run does", "[tools][sweep]") {
  const SweepSpace space({{"parallelism.zero_stage", {"1", "2"}},
                          {"training.recompute", {"none", "full"}},
                          {"parallelism.pp", {"1", "2"}}},
                         false, {"cluster.gpus=16", "training.global_batch=128"}, 8);
  const scenarios::ScenarioTemplate base(kSmall, "small.yaml");
  for (int threads : {1, 2}) {
    SweepOptions opt;
    opt.threads = threads;
    std::vector<Row> rows;
    const SweepStats stats = run_sweep(base, space, opt, [&](const Row& r) { rows.push_back(r); });
    REQUIRE(rows.size() == 8);
    CHECK(stats.reused_steps == 2);  // pp 2, recompute none and full; pp 1 reduces every micro-batch
    for (const Row& r : rows) {
      const Config c = space.at(r.index);
      REQUIRE(r.status == Status::ok);
      const auto alone = scenarios::simulate(base.instantiate(c.overrides));
      CHECK(csv_line(r.cells) == csv_line(make_row(space, c, {}, Status::ok, "", &alone).cells));
    }
  }
  // Without the overlap ZeRO-2 launches each bucket when it fills (ZeRO-1 holds them): no pair.
  const SweepSpace held(
      {{"parallelism.zero_stage", {"1", "2"}}}, false,
      {"cluster.gpus=16", "training.global_batch=128", "parallelism.pp=2", "training.overlap_grad_reduce=false"}, 8);
  CHECK(run_sweep(base, held, {}, [](const Row&) {}).reused_steps == 0);
}
}}  // namespace CLUSTERSIM_TEST_ID
