// DualPipeV (deepseek-ai/DualPipe, dualpipev.py: DeepSeek-V3's DualPipe cut in half): two model
// chunks per rank in a V, one micro-batch's forward run against another's backward, the backward
// split into B and W where the schedule defers W. The order is checked pass by pass, its bubble
// against the DualPipe README's closed form, its memory against 1F1B's, and its keys' errors.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "models/pipeline.hpp"
#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using models::PassKind;
using models::PipelineSchedule;

namespace {

models::ParallelSpec dualpipev(int pp) {
  models::ParallelSpec p;
  p.pp = pp;
  p.vpp = 2;
  p.schedule = PipelineSchedule::dualpipev;
  return p;
}

scenarios::Scenario gpt(int pp, int micro_batches, const std::string& parallel_extra) {
  const std::string yaml = fmt::format(R"(
model: {{layers: 16, hidden: 4096, heads: 32, ffn_hidden: 16384, vocab: 1024, activation: gelu}}
hardware: h100-sxm
cluster: {{gpus: {}}}
parallelism: {{pp: {}{}}}
training: {{seq_len: 2048, global_batch: {}, micro_batch: 1}}
)", pp, pp, parallel_extra, micro_batches);
  return scenarios::load_scenario_string(yaml, "<test>");
}

}  // namespace

TEST_CASE("dualpipev places chunk 1 of rank r on virtual stage 2pp-1-r and back", "[models][dualpipe]") {
  const auto p = dualpipev(4);
  CHECK(p.vstage_of(0, 0) == 0);
  CHECK(p.vstage_of(3, 0) == 3);
  CHECK(p.vstage_of(3, 1) == 4);  // the V's turn: the last rank holds stages 3 and 4
  CHECK(p.vstage_of(0, 1) == 7);  // rank 0 holds the first and the last stage
  for (int vs = 0; vs < 8; ++vs) CHECK(p.vstage_of(p.rank_of(vs), vs < 4 ? 0 : 1) == vs);
}

TEST_CASE("dualpipev runs F, B and W of every micro-batch and chunk once, in order, and never deadlocks",
          "[models][dualpipe]") {
  for (int pp : {2, 4, 8})
    for (int m : {2 * pp, 2 * pp + 1, 3 * pp, 20})
      for (int r = 0; r < pp; ++r) {
        INFO("pp " << pp << ", m " << m << ", rank " << r);
        const auto ops = models::stage_schedule(dualpipev(pp), r, m);
        REQUIRE(ops.size() == std::size_t(2 * 3 * m));
        std::set<std::tuple<int, int, int>> seen;
        std::map<std::pair<int, int>, int> next;  // (kind, chunk) → the micro-batch expected next
        for (const auto& op : ops) {
          REQUIRE(seen.insert({int(op.kind), op.micro_batch, op.chunk}).second);
          if (op.kind != PassKind::weight_grad) REQUIRE(next[{int(op.kind), op.chunk}]++ == op.micro_batch);
          if (op.kind == PassKind::backward) REQUIRE(seen.count({int(PassKind::forward), op.micro_batch, op.chunk}));
          if (op.kind == PassKind::weight_grad) REQUIRE(seen.count({int(PassKind::backward), op.micro_batch, op.chunk}));
        }
      }
  for (int pp : {2, 4, 8})
    for (int m = 2 * pp; m <= 3 * pp + 1; ++m)
      REQUIRE_NOTHROW(models::emit_pipeline(dualpipev(pp), m, [](int, const models::PipeOp&, std::vector<sim::TaskId>) {
        return std::vector<sim::TaskId>{};
      }));
  REQUIRE_THROWS_AS(models::check_schedule(dualpipev(4), 7), std::invalid_argument);  // fewer than 2·pp
  auto three = dualpipev(4);
  three.vpp = 3;
  REQUIRE_THROWS_AS(models::check_schedule(three, 8), std::invalid_argument);
}

// Idle time per rank when each pass of the emitted order takes a fixed time by kind and starts when
// its rank is free and its input is done (compute only).
static std::vector<double> unit_idle(const models::ParallelSpec& p, int m, double tf, double tb, double tw) {
  std::vector<double> end_of, clock(std::size_t(p.pp), 0.0), busy(std::size_t(p.pp), 0.0);
  models::emit_pipeline(p, m, [&](int s, const models::PipeOp& op, std::vector<sim::TaskId> deps) {
    double start = clock[std::size_t(s)];
    for (sim::TaskId d : deps) start = std::max(start, end_of[std::size_t(d)]);
    const double d = op.kind == PassKind::forward ? tf : op.kind == PassKind::backward ? tb : tw;
    clock[std::size_t(s)] = start + d, busy[std::size_t(s)] += d;
    end_of.push_back(start + d);
    return std::vector<sim::TaskId>{sim::TaskId(end_of.size() - 1)};
  });
  const double span = *std::max_element(clock.begin(), clock.end());
  std::vector<double> idle;
  for (double b : busy) idle.push_back(span - b);
  return idle;
}

TEST_CASE("dualpipev's emitted order idles each rank as an independent list schedule of the source's steps",
          "[models][dualpipe]") {
  // Reference: a separate Python list scheduler of dualpipev.py's eight steps (unit F, B, W
  // times, 3·pp micro-batches; not part of the build): every rank idles pp − 1 units with
  // F = B = W = 1, 8 (pp 4) and 20 (pp 8) units with B = 2. The README's (P−1)(F&B + B − 3W)
  // counts an F&B pair as shorter than F + B; with nothing to hide it gives 2(P−1), an upper bound.
  for (const auto& [pp, tb, idle] : {std::tuple{2, 1.0, 1.0}, std::tuple{4, 1.0, 3.0}, std::tuple{8, 1.0, 7.0},
                                     std::tuple{4, 2.0, 8.0}, std::tuple{8, 2.0, 20.0}}) {
    INFO("pp " << pp << ", B " << tb);
    for (double x : unit_idle(dualpipev(pp), 3 * pp, 1.0, tb, 1.0)) CHECK(x == Approx(idle));
  }
}

TEST_CASE("dualpipev's simulated bubble is below 1F1B's and zb-h1's, with the same work", "[models][dualpipe]") {
  for (int pp : {4, 8}) {
    auto v = gpt(pp, 2 * pp, ", schedule: dualpipev");
    auto z = gpt(pp, 2 * pp, ", schedule: zb-h1");
    auto f = gpt(pp, 2 * pp, "");
    v.training.free_comm.pp = z.training.free_comm.pp = f.training.free_comm.pp = true;
    const auto rv = scenarios::simulate(v), rz = scenarios::simulate(z), rf = scenarios::simulate(f);
    INFO("pp " << pp << ": bubble dualpipev " << rv.step.breakdown.bubble_s << " s, zb-h1 " << rz.step.breakdown.bubble_s
               << " s, 1f1b " << rf.step.breakdown.bubble_s << " s");
    CHECK(rv.step.breakdown.bubble_s < rz.step.breakdown.bubble_s);
    CHECK(rv.step.breakdown.bubble_s < rf.step.breakdown.bubble_s);
    // The V puts the embedding and the LM head both on rank 0 (a 1024-token vocabulary here):
    // the reported stage's compute moves by well under 1 %.
    CHECK(rv.step.breakdown.forward_s == Approx(rf.step.breakdown.forward_s).epsilon(0.01));
  }
}

TEST_CASE("dualpipev keys: vpp 2 by default, other vpp refused, too few micro-batches refused", "[scenario][dualpipe]") {
  const auto sc = gpt(4, 8, ", schedule: dualpipev");
  CHECK(sc.parallel.vpp == 2);
  CHECK_THROWS_WITH(gpt(4, 8, ", schedule: dualpipev, vpp: 4"), Catch::Contains("dualpipev runs two model chunks"));
  CHECK_THROWS_WITH(gpt(4, 4, ", schedule: dualpipev"), Catch::Contains("at least 2·pp"));
  CHECK_THROWS_WITH(gpt(1, 4, ", schedule: dualpipev"), Catch::Contains("pp >= 2"));
}

TEST_CASE("zbv (PyTorch's ScheduleZBVZeroBubble order) runs every pass once, in order, and never deadlocks",
          "[models][zbv]") {
  for (int pp : {2, 4, 8})
    for (int m : {1, 3, 2 * pp - 1, 2 * pp, 3 * pp + 1})
      for (int r = 0; r < pp; ++r) {
        INFO("pp " << pp << ", m " << m << ", rank " << r);
        auto p = dualpipev(pp);
        p.schedule = PipelineSchedule::zbv;
        const auto ops = models::stage_schedule(p, r, m);
        REQUIRE(ops.size() == std::size_t(2 * 3 * m));
        std::set<std::tuple<int, int, int>> seen;
        for (const auto& op : ops) {
          REQUIRE(seen.insert({int(op.kind), op.micro_batch, op.chunk}).second);
          if (op.kind == PassKind::backward) REQUIRE(seen.count({int(PassKind::forward), op.micro_batch, op.chunk}));
          if (op.kind == PassKind::weight_grad) REQUIRE(seen.count({int(PassKind::backward), op.micro_batch, op.chunk}));
        }
      }
  for (int pp : {2, 4, 8})
    for (int m = 1; m <= 3 * pp; ++m) {
      auto p = dualpipev(pp);
      p.schedule = PipelineSchedule::zbv;
      REQUIRE_NOTHROW(models::emit_pipeline(p, m, [](int, const models::PipeOp&, std::vector<sim::TaskId>) {
        return std::vector<sim::TaskId>{};
      }));
    }
}

TEST_CASE("zbv's bubble is below zb-h1's and 1F1B's on the same stages, with the same work", "[models][zbv]") {
  for (int pp : {4, 8}) {
    auto v = gpt(pp, 2 * pp, ", schedule: zbv");
    auto z = gpt(pp, 2 * pp, ", schedule: zb-h1");
    auto f = gpt(pp, 2 * pp, "");
    v.training.free_comm.pp = z.training.free_comm.pp = f.training.free_comm.pp = true;
    const auto rv = scenarios::simulate(v), rz = scenarios::simulate(z), rf = scenarios::simulate(f);
    INFO("pp " << pp << ": bubble zbv " << rv.step.breakdown.bubble_s << " s, zb-h1 " << rz.step.breakdown.bubble_s
               << " s, 1f1b " << rf.step.breakdown.bubble_s << " s");
    CHECK(rv.step.breakdown.bubble_s < rz.step.breakdown.bubble_s);
    CHECK(rv.step.breakdown.bubble_s < rf.step.breakdown.bubble_s);
    // As above: the V's rank 0 runs the embedding and the LM head.
    CHECK(rv.step.breakdown.backward_s == Approx(rf.step.breakdown.backward_s).epsilon(0.01));
  }
}

TEST_CASE("the V's split balances ranks with rank 0's embedding, loss and MTP counted", "[models][dualpipe]") {
  // DeepSeek-V3 at pp 16: 61 layers + 2 MTP layer-equivalents. Rank 0's embedding, loss and MTP
  // weigh 4 layers, so it takes one layer (its last chunk holds none: only the loss and the MTP
  // modules, as Megatron's pipeline layout allows) and the 60 others go 4 to each of 15 ranks:
  // the busiest rank carries 5 loads either way, and 1 layer is the most rank 0 can take at that.
  const auto ds = models::v_stage_layers(61, 16, 2).layers;
  REQUIRE(ds.size() == 32);
  CHECK(ds[0] == 1);
  CHECK(ds[31] == 0);
  int sum = 0;
  for (int r = 0; r < 16; ++r) {
    const int n = ds[std::size_t(r)] + ds[std::size_t(31 - r)];
    sum += n;
    if (r > 0) CHECK(n == 4);
  }
  CHECK(sum == 61);
  // Where rank 0 can take its share, every rank's load (layers, + 2 + MTP on rank 0) is within one
  // layer of the others', and every rank but 0 keeps a layer in each chunk.
  for (const auto& [layers, pp, extra] : {std::tuple{62, 4, 0}, std::tuple{94, 8, 0}, std::tuple{61, 4, 2}, std::tuple{126, 8, 0}}) {
    INFO(layers << " layers, pp " << pp << ", extra " << extra);
    const auto v = models::v_stage_layers(layers, pp, extra).layers;
    REQUIRE(v.size() == std::size_t(2 * pp));
    int lo = 1 << 20, hi = 0, total = 0;
    for (int r = 0; r < pp; ++r) {
      const int n = v[std::size_t(r)] + v[std::size_t(2 * pp - 1 - r)];
      if (r > 0) {
        CHECK(v[std::size_t(r)] >= 1);
        CHECK(v[std::size_t(2 * pp - 1 - r)] >= 1);
      }
      total += n;
      const int load = n + (r == 0 ? 2 + extra : 0);
      lo = std::min(lo, load), hi = std::max(hi, load);
    }
    CHECK(total == layers);
    CHECK(hi - lo <= 1);
  }
  // A small model: rank 0's embedding and loss outweigh a layer's share, so it holds none.
  CHECK(models::v_stage_layers(6, 4).layers == std::vector<int>{0, 1, 1, 1, 1, 1, 1, 0});
  CHECK(models::v_stage_layers(5, 4).layers.empty());  // fewer than one layer per chunk off rank 0
}

}}  // namespace CLUSTERSIM_TEST_ID
