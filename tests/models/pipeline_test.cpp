#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <tuple>

#include "models/pipeline.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::models;

namespace {

ParallelSpec pipeline(int pp, int vpp, PipelineSchedule s) {
  ParallelSpec p;
  p.pp = pp;
  p.vpp = vpp;
  p.schedule = s;
  return p;
}

// Every (direction, micro-batch, chunk) exactly once, and each backward after its forward.
void require_complete(const ParallelSpec& p, int stage, int m) {
  const auto ops = stage_schedule(p, stage, m);
  REQUIRE(ops.size() == std::size_t(2 * m * p.vpp));
  std::set<std::tuple<bool, int, int>> seen;
  for (const auto& op : ops) {
    REQUIRE(seen.insert({op.forward(), op.micro_batch, op.chunk}).second);
    if (!op.forward()) REQUIRE(seen.count({true, op.micro_batch, op.chunk}) == 1);
  }
}

}  // namespace

TEST_CASE("1F1B warms up pp - stage - 1 forwards, then alternates", "[models]") {
  const auto p = pipeline(4, 1, PipelineSchedule::one_f_one_b);
  const auto ops = stage_schedule(p, 0, 8);
  for (int i = 0; i < 3; ++i) REQUIRE((ops[std::size_t(i)].forward() && ops[std::size_t(i)].micro_batch == i));
  REQUIRE(ops[3].forward());
  REQUIRE(!ops[4].forward());
  REQUIRE(ops[4].micro_batch == 0);
  const auto last = stage_schedule(p, 3, 8);
  REQUIRE(last[0].forward());
  REQUIRE(!last[1].forward());
  for (int s = 0; s < 4; ++s) require_complete(p, s, 8);
}

TEST_CASE("every schedule runs each pass of each micro-batch and chunk once", "[models]") {
  for (int s = 0; s < 4; ++s) {
    require_complete(pipeline(4, 1, PipelineSchedule::gpipe), s, 6);
    require_complete(pipeline(4, 2, PipelineSchedule::interleaved), s, 8);
    require_complete(pipeline(4, 3, PipelineSchedule::interleaved), s, 4);
  }
}

TEST_CASE("activations in flight: pp - stage micro-batches under 1F1B, all under GPipe", "[models]") {
  const std::vector<int> layers = {6, 6, 6, 6};
  const auto f1b = pipeline(4, 1, PipelineSchedule::one_f_one_b);
  REQUIRE(peak_layers_in_flight(f1b, 0, 16, layers) == 4 * 6);
  REQUIRE(peak_layers_in_flight(f1b, 3, 16, layers) == 1 * 6);
  REQUIRE(peak_layers_in_flight(f1b, 0, 2, layers) == 2 * 6);  // fewer micro-batches than stages
  const auto gpipe = pipeline(4, 1, PipelineSchedule::gpipe);
  REQUIRE(peak_layers_in_flight(gpipe, 3, 16, layers) == 16 * 6);
  // Interleaved, pp 4, vpp 2, 3 layers per chunk: stage 0 warms up (4−1)·2 + (2−1)·4 = 10
  // chunk-forwards and holds one more in the first steady step (Megatron's schedule).
  const auto inter = pipeline(4, 2, PipelineSchedule::interleaved);
  REQUIRE(peak_layers_in_flight(inter, 0, 16, std::vector<int>(8, 3)) == 11 * 3);
}

TEST_CASE("the in-flight peak of a long schedule equals the count over its whole pass order", "[models]") {
  // peak_layers_in_flight stops after 3·pp micro-batches (the steady phase is periodic); walk the
  // full order here, with uneven chunks so that a period's F and B layers differ pair by pair.
  for (const auto& [pp, vpp] : std::vector<std::pair<int, int>>{{2, 1}, {4, 1}, {4, 2}, {4, 3}, {8, 4}}) {
    const auto p = pipeline(pp, vpp, vpp > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b);
    std::vector<int> layers;
    for (int c = 0; c < pp * vpp; ++c) layers.push_back(1 + (c * 7) % 5);
    for (int m : {3 * pp + pp, 8 * pp, 16 * pp}) {
      for (int s = 0; s < pp; ++s) {
        int now = 0, peak = 0;
        for (const PipeOp& op : stage_schedule(p, s, m)) {
          const int l = layers[static_cast<std::size_t>(op.chunk * pp + s)];
          now += op.forward() ? l : -l;
          peak = std::max(peak, now);
        }
        INFO("pp " << pp << " vpp " << vpp << " m " << m << " stage " << s);
        REQUIRE(peak_layers_in_flight(p, s, m, layers) == peak);
      }
    }
  }
}

TEST_CASE("an even layer split puts the remainder on the last stages", "[models]") {
  auto p = pipeline(4, 1, PipelineSchedule::one_f_one_b);
  REQUIRE(virtual_stage_layers(10, p) == std::vector<int>{2, 2, 3, 3});
  p.pp_layers = {1, 3, 3, 3};
  REQUIRE(virtual_stage_layers(10, p) == std::vector<int>{1, 3, 3, 3});
}

TEST_CASE("the schedule's dependency rule: F after the previous stage's F, B after the next's B, W after its B", "[models]") {
  using clustersim::models::PassKind;
  using clustersim::models::PassRef;
  using clustersim::models::PipeOp;
  PassRef in;
  REQUIRE_FALSE(clustersim::models::input_of(PipeOp{PassKind::forward, 3, 0}, 0, 4, &in));
  REQUIRE(clustersim::models::input_of(PipeOp{PassKind::forward, 3, 0}, 2, 4, &in));
  CHECK((in.kind == PassKind::forward && in.micro_batch == 3 && in.vstage == 1));
  REQUIRE(clustersim::models::input_of(PipeOp{PassKind::backward, 3, 0}, 3, 4, &in));  // last stage: its own F
  CHECK((in.kind == PassKind::forward && in.vstage == 3));
  REQUIRE(clustersim::models::input_of(PipeOp{PassKind::backward, 3, 0}, 1, 4, &in));
  CHECK((in.kind == PassKind::backward && in.vstage == 2));
  REQUIRE(clustersim::models::input_of(PipeOp{PassKind::weight_grad, 3, 0}, 1, 4, &in));
  CHECK((in.kind == PassKind::backward && in.micro_batch == 3 && in.vstage == 1));
}

TEST_CASE("the pipeline emitter adds every pass once, after the pass it consumes", "[models]") {
  clustersim::models::ParallelSpec p;
  p.pp = 4, p.vpp = 2, p.schedule = clustersim::models::PipelineSchedule::interleaved;
  const int m = 8;
  std::map<std::tuple<int, int, int>, int> emitted;  // (kind, micro-batch, vstage) → emission order
  int order = 0;
  clustersim::models::emit_pipeline(p, m, [&](int s, const clustersim::models::PipeOp& op, std::vector<int> deps) {
    const int vs = op.chunk * p.pp + s;
    clustersim::models::PassRef in;
    if (clustersim::models::input_of(op, vs, p.pp * p.vpp, &in)) {
      const auto it = emitted.find({int(in.kind), in.micro_batch, in.vstage});
      REQUIRE(it != emitted.end());
      REQUIRE(deps == std::vector<int>{it->second});  // the tasks its input returned
    } else {
      REQUIRE(deps.empty());
    }
    REQUIRE(emitted.emplace(std::make_tuple(int(op.kind), op.micro_batch, vs), order).second);
    return std::vector<int>{order++};
  });
  CHECK(order == 2 * m * p.pp * p.vpp);
}

namespace {

// How many of stage `stage`'s forwards and backwards the schedule pairs (PipeOp::paired).
std::pair<int, int> paired_passes(const ParallelSpec& p, int stage, int m) {
  int f = 0, b = 0;
  for (const PipeOp& op : stage_schedule(p, stage, m)) {
    if (op.kind == PassKind::weight_grad) CHECK_FALSE(op.paired);
    if (op.paired) (op.forward() ? f : b) += 1;
  }
  return {f, b};
}

}  // namespace

// Megatron-Core's combined 1F1B (moe_a2a_overlap): with interleaving, (pp − r − 1)·2 + (vpp − 1)·pp
// warm-up forwards plus one more run alone, as many cool-down backwards, the rest in F/B pairs
// (schedules.py get_pp_rank_microbatches); without pipelining, all but the first forward and the
// last backward (combined_1f1b.py). DualPipeV pairs the chunks of its main steps 4 (F0 with B1, F1
// with B0) and 5 (F1 with B0) (dualpipev.py _forward_backward_chunk).
TEST_CASE("schedules mark the passes that run beside a pass of the other direction", "[models][pipeline]") {
  const int pp = 4, vpp = 2, m = 8, total = m * vpp;
  for (int r = 0; r < pp; ++r) {
    const int alone = std::min(total, (pp - r - 1) * 2 + (vpp - 1) * pp + 1);
    const auto [f, b] = paired_passes(pipeline(pp, vpp, PipelineSchedule::interleaved), r, m);
    CHECK(f == total - alone);
    CHECK(b == total - alone);
  }
  const auto [f1, b1] = paired_passes(pipeline(1, 1, PipelineSchedule::one_f_one_b), 0, 5);
  CHECK(f1 == 4);
  CHECK(b1 == 4);
  const auto first = stage_schedule(pipeline(1, 1, PipelineSchedule::one_f_one_b), 0, 5);
  CHECK_FALSE(first.front().paired);  // the first forward
  CHECK_FALSE(first.back().paired);   // the last backward
  for (int r = 0; r < pp; ++r) {
    const int main_steps = m + 2 - 2 * pp + r + 1;  // m = 10
    const auto [f, b] = paired_passes(pipeline(pp, 1, PipelineSchedule::dualpipev), r, m + 2);
    CHECK(f == 2 * main_steps + (pp - r - 1));
    CHECK(b == 2 * main_steps + (pp - r - 1));
  }
  for (PipelineSchedule none : {PipelineSchedule::gpipe, PipelineSchedule::zbv}) {
    const auto [f, b] = paired_passes(pipeline(pp, none == PipelineSchedule::zbv ? 2 : 1, none), 1, m);
    CHECK(f + b == 0);
  }
}
}}  // namespace CLUSTERSIM_TEST_ID
