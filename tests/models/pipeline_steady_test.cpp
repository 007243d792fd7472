// A deep pipeline's step is extrapolated from three small steps once its schedule repeats
// (models/detail/pipeline_steady.hpp). The extrapolation must equal the step simulated micro-batch by
// micro-batch in every field, bit for bit; when the sampled integers are not affine it must
// refuse (and simulate_step then simulates in full). emit_pipeline refuses an invalid schedule.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "models/pipeline.hpp"
#include "models/detail/pipeline_steady.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

void check_same(const models::StepBreakdown& a, const models::StepBreakdown& b) {
  CHECK(a.forward_s == b.forward_s);
  CHECK(a.backward_s == b.backward_s);
  CHECK(a.recompute_s == b.recompute_s);
  CHECK(a.optimizer_s == b.optimizer_s);
  CHECK(a.comm_exposed[models::Channel::dp] == b.comm_exposed[models::Channel::dp]);
  CHECK(a.idle_s == b.idle_s);
  CHECK(a.comm_exposed[models::Channel::tp] == b.comm_exposed[models::Channel::tp]);
  CHECK(a.comm_exposed[models::Channel::cp] == b.comm_exposed[models::Channel::cp]);
  CHECK(a.comm_exposed[models::Channel::pp] == b.comm_exposed[models::Channel::pp]);
  CHECK(a.bubble_s == b.bubble_s);
  CHECK(a.comm_exposed[models::Channel::ep] == b.comm_exposed[models::Channel::ep]);
}

// simulate_step (steady state, which the plan must qualify for) against simulate_step_full.
void check_extrapolation_exact(const std::string& yaml, const std::vector<std::string>& sets) {
  const auto sc = scenarios::load_scenario_string(yaml, "<test>", sets);
  const auto& t = sc.training;
  const auto& p = sc.parallel;
  const int mbs = t.micro_batches(p);
  INFO(sc.name << ": pp " << p.pp << " vpp " << p.vpp << ", " << mbs << " micro-batches, ZeRO-" << p.zero_stage);
  REQUIRE(models::steady_samples(p, mbs).has_value());
  const auto costs = models::step_costs(sc.model, t, p, sc.gpu,
                                        sc.network.topology.pcie_bandwidth.si() * sc.network.topology.pcie_efficiency);
  const topologies::Network net(sc.network.topology, topologies::Network::nodes_for(sc.network.topology, sc.cluster.gpus),
                                {p.sizes(), sc.network.placement}, sc.network.algorithm);
  const auto extrapolated = models::simulate_step_steady(sc.model, t, p, sc.gpu, costs, net);
  REQUIRE(extrapolated.has_value());  // the samples were exactly affine: no fallback here
  const models::StepResult& steady = *extrapolated;
  const models::StepResult full = models::simulate_step_full(sc.model, t, p, sc.gpu, costs, net);
  CHECK(steady.step_time_s == full.step_time_s);
  CHECK(steady.tasks == full.tasks);
  CHECK(steady.events == full.events);
  CHECK(steady.stage == full.stage);
  CHECK(steady.micro_batches == full.micro_batches);
  CHECK(steady.grad_buckets == full.grad_buckets);
  CHECK(steady.comm_busy[models::Channel::dp] == full.comm_busy[models::Channel::dp]);
  CHECK(steady.compute_slowdown_s == full.compute_slowdown_s);
  CHECK(steady.comm_busy[models::Channel::tp] == full.comm_busy[models::Channel::tp]);
  CHECK(steady.comm_busy[models::Channel::cp] == full.comm_busy[models::Channel::cp]);
  CHECK(steady.comm_busy[models::Channel::ep] == full.comm_busy[models::Channel::ep]);
  check_same(steady.breakdown, full.breakdown);
  REQUIRE(steady.stages.size() == full.stages.size());
  for (std::size_t s = 0; s < full.stages.size(); ++s) check_same(steady.stages[s], full.stages[s]);
}

std::string llama8b(int gpus, int batch, const std::string& training_extra = "") {
  return testing::scenario_text("llama3-8b", "h100-sxm", gpus, 4096, batch, "", "  micro_batch: 1\n" + training_extra);
}

}  // namespace

TEST_CASE("steady-state pipeline: 1F1B, ZeRO-1 with overlapped DP, equals the full step", "[step][steady]") {
  check_extrapolation_exact(llama8b(64, 8 * 72), {"parallelism.pp=8", "parallelism.zero_stage=1"});
}

TEST_CASE("steady-state pipeline: 1F1B without DP overlap, ZeRO-0, TP", "[step][steady]") {
  check_extrapolation_exact(llama8b(64, 4 * 72, "  overlap_grad_reduce: false\n"),
                            {"parallelism.pp=8", "parallelism.tp=2", "parallelism.zero_stage=0"});
}

TEST_CASE("steady-state pipeline: zb-h1 with ZeRO-1 and overlapped DP equals the full step", "[step][steady][zb]") {
  check_extrapolation_exact(llama8b(64, 8 * 72), {"parallelism.pp=8", "parallelism.zero_stage=1", "parallelism.schedule=zb-h1"});
}

TEST_CASE("steady-state pipeline: zb-h1 without DP overlap with ZeRO-0 and TP", "[step][steady][zb]") {
  check_extrapolation_exact(llama8b(64, 4 * 72, "  overlap_grad_reduce: false\n"),
                            {"parallelism.pp=8", "parallelism.tp=2", "parallelism.zero_stage=0", "parallelism.schedule=zb-h1"});
}

TEST_CASE("steady-state pipeline: interleaved, equals the full step", "[step][steady]") {
  check_extrapolation_exact(llama8b(32, 8 * 56), {"parallelism.pp=4", "parallelism.vpp=2", "parallelism.zero_stage=1"});
}

TEST_CASE("steady-state pipeline: the V schedules (ZB-V, DualPipeV) equal the full step", "[step][steady][zb]") {
  // Two chunks per stage; their steady loops take one micro-batch per chunk per turn.
  check_extrapolation_exact(llama8b(64, 8 * 72), {"parallelism.pp=8", "parallelism.vpp=2", "parallelism.zero_stage=1",
                                                  "parallelism.schedule=zbv"});
  check_extrapolation_exact(llama8b(64, 8 * 72), {"parallelism.pp=8", "parallelism.vpp=2", "parallelism.zero_stage=1",
                                                  "parallelism.schedule=dualpipev"});
  check_extrapolation_exact(llama8b(64, 4 * 72, "  overlap_grad_reduce: false\n"),
                            {"parallelism.pp=8", "parallelism.vpp=2", "parallelism.tp=2", "parallelism.zero_stage=0",
                             "parallelism.schedule=dualpipev"});
}

TEST_CASE("steady-state pipeline: uneven split (32 layers over 6 stages)", "[step][steady]") {
  check_extrapolation_exact(llama8b(48, 8 * 60), {"parallelism.pp=6", "parallelism.zero_stage=1"});
}

TEST_CASE("steady-state pipeline: ZeRO-2 and ZeRO-3 with pipeline parallelism", "[step][steady]") {
  check_extrapolation_exact(llama8b(64, 8 * 72), {"parallelism.pp=8", "parallelism.zero_stage=2"});
  check_extrapolation_exact(llama8b(64, 8 * 72), {"parallelism.pp=8", "parallelism.zero_stage=3"});
}

TEST_CASE("steady-state gradient accumulation without a pipeline: FSDP (ZeRO-3) and ZeRO-1", "[step][steady]") {
  check_extrapolation_exact(llama8b(64, 64 * 24), {"parallelism.tp=2", "parallelism.zero_stage=3"});
  check_extrapolation_exact(llama8b(64, 32 * 24), {"parallelism.tp=2", "parallelism.zero_stage=1"});
}

TEST_CASE("steady-state pipeline: MoE with expert parallelism", "[step][steady]") {
  check_extrapolation_exact(testing::scenario_text("mixtral-8x7b", "h100-sxm", 64, 4096, 8 * 40, "", "  micro_batch: 1\n"),
                            {"parallelism.pp=4", "parallelism.tp=2", "parallelism.sequence_parallel=true", "parallelism.ep=8",
                             "parallelism.zero_stage=1"});
}

TEST_CASE("steady-state samples: which schedules and micro-batch counts qualify", "[step][steady]") {
  models::ParallelSpec p;
  p.pp = 8;
  CHECK_FALSE(models::steady_samples(p, 40).has_value());  // not much larger than three samples
  const auto s = models::steady_samples(p, 72);
  REQUIRE(s.has_value());
  CHECK(s->m0 == 16);
  CHECK(s->period == 1);
  p.vpp = 2;
  p.schedule = models::PipelineSchedule::interleaved;
  CHECK_FALSE(models::steady_samples(p, 148).has_value());  // not a multiple of pp
  CHECK_FALSE(models::steady_samples(p, 88).has_value());   // fewer than 4·(m0 + period)
  const auto i = models::steady_samples(p, 160);
  REQUIRE(i.has_value());
  CHECK(i->period == 8);
  for (auto v : {models::PipelineSchedule::zbv, models::PipelineSchedule::dualpipev}) {
    p.schedule = v;  // two chunks per stage, one micro-batch per turn: from 2·pp, then 3·pp
    CHECK(models::steady_samples(p, 68, 0)->m0 == 16);
    CHECK(models::steady_samples(p, 68, 0)->period == 1);
    CHECK_FALSE(models::steady_samples(p, 68, 1).has_value());  // 4·(24 + 1) > 68
    CHECK(models::steady_samples(p, 100, 1)->m0 == 24);
    CHECK_FALSE(models::steady_samples(p, 1000, 2).has_value());
  }
  p.schedule = models::PipelineSchedule::gpipe;
  p.vpp = 1;
  CHECK_FALSE(models::steady_samples(p, 160).has_value());
  p.schedule = models::PipelineSchedule::one_f_one_b;
  p.pp = 1;
  CHECK_FALSE(models::steady_samples(p, 19).has_value());
  const auto g = models::steady_samples(p, 20);
  REQUIRE(g.has_value());
  CHECK(g->m0 == 4);
}

TEST_CASE("steady-state pipeline: a deep pipeline not yet steady at 2 pp is extrapolated from 3 pp", "[step][steady]") {
  // Llama-3 70B over 64 stages (16 of 2 layers, 48 of 1), zb-h1, CP 2, no recompute, 1,024
  // micro-batches: the samples at m0 = 128 are not affine (a stream still drifts); the second
  // attempt at 192 is, and its extrapolation equals the full step bit for bit.
  models::ParallelSpec p;
  p.pp = 64;
  CHECK(models::steady_samples(p, 1024, 0)->m0 == 128);
  CHECK(models::steady_samples(p, 1024, 1)->m0 == 192);
  CHECK_FALSE(models::steady_samples(p, 1024, 2).has_value());
  CHECK_FALSE(models::steady_samples(p, 760, 1).has_value());  // 4·(192 + 1) = 772 > 760: no second attempt
  check_extrapolation_exact(
      testing::scenario_text("llama3-70b", "h100-sxm", 1024, 8192, 1024, "  pp: 64\n  cp: 2\n  schedule: zb-h1\n",
                             "  micro_batch: 1\n  recompute: none\n"),
      {"parallelism.tp=8"});
}

TEST_CASE("steady-state extrapolation refuses samples that are not exactly affine", "[step][steady]") {
  auto tally = [](std::int64_t makespan, std::int64_t bubble, std::int64_t merged) {
    models::StepTally t;
    t.makespan_ps = makespan;
    t.events = 10, t.tasks = 5;
    t.stages.resize(2);
    t.stages[1].ps[models::kTallyIdle] = bubble;
    t.stages[1].merged_n = {merged};
    t.stages[1].merged_excess = {0};
    return t;
  };
  // Affine: 100, 130, 160 → at k = 10: 400.
  const auto ok = models::extrapolate_tally({tally(100, 7, 3), tally(130, 9, 4), tally(160, 11, 5)}, 10);
  REQUIRE(ok.has_value());
  CHECK(ok->makespan_ps == 400);
  CHECK(ok->stages[1].ps[models::kTallyIdle] == 27);
  CHECK(ok->stages[1].merged_n[0] == 13);
  CHECK(ok->events == 10);
  // One picosecond off in any integer refuses.
  CHECK_FALSE(models::extrapolate_tally({tally(100, 7, 3), tally(130, 9, 4), tally(161, 11, 5)}, 10).has_value());
  CHECK_FALSE(models::extrapolate_tally({tally(100, 7, 3), tally(130, 9, 4), tally(160, 12, 5)}, 10).has_value());
  CHECK_FALSE(models::extrapolate_tally({tally(100, 7, 3), tally(130, 9, 4), tally(160, 11, 6)}, 10).has_value());
  // A profile first used at the last sample counts as zero before: 0, 0, 2 is not affine.
  auto late = tally(160, 11, 5);
  late.stages[1].merged_n.push_back(2);
  late.stages[1].merged_excess.push_back(0);
  CHECK_FALSE(models::extrapolate_tally({tally(100, 7, 3), tally(130, 9, 4), late}, 10).has_value());
  // A stream drifting against the others (its last tasks' ends before the step's end) refuses.
  auto drift = tally(160, 11, 5);
  drift.tail = {{1, 7}};
  CHECK_FALSE(models::extrapolate_tally({tally(100, 7, 3), tally(130, 9, 4), drift}, 10).has_value());
  // Non-additive values must be equal.
  auto other = tally(160, 11, 5);
  other.grad_buckets = 3;
  CHECK_FALSE(models::extrapolate_tally({tally(100, 7, 3), tally(130, 9, 4), other}, 10).has_value());
}

TEST_CASE("emit_pipeline refuses an invalid schedule with the rule it breaks", "[pipeline]") {
  models::ParallelSpec p;
  p.pp = 4;
  p.vpp = 2;
  p.schedule = models::PipelineSchedule::interleaved;
  const models::EmitPass emit = [](int, const models::PipeOp&, std::vector<sim::TaskId>) {
    return std::vector<sim::TaskId>{};
  };
  CHECK_THROWS_WITH(models::emit_pipeline(p, 6, emit), Catch::Contains("multiple of pp"));
  CHECK_THROWS_AS(models::emit_pipeline(p, 6, emit), std::invalid_argument);
  CHECK_THROWS_WITH(models::emit_pipeline(p, 0, emit), Catch::Contains("at least one micro-batch"));
  CHECK_NOTHROW(models::emit_pipeline(p, 8, emit));
  p.schedule = models::PipelineSchedule::one_f_one_b;
  CHECK_THROWS_WITH(models::emit_pipeline(p, 8, emit), Catch::Contains("vpp > 1 needs the interleaved schedule"));
  p.vpp = 1;
  p.pp = 0;
  CHECK_THROWS_AS(models::emit_pipeline(p, 8, emit), std::invalid_argument);
}

}}  // namespace CLUSTERSIM_TEST_ID
