// The attribution rule on a hand-built two-stage step whose answer is worked out by hand: a
// stage's edges come from several streams (its compute and TP streams, the neighbour's send
// stream), so the pass that puts them in time order is exercised across runs.
#include <catch2/catch.hpp>

#include "models/detail/step_attribution.hpp"
#include "sim/runner.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using models::StageTally;

namespace {

constexpr std::int64_t kUs = 1'000'000;  // picoseconds per microsecond

topologies::CollectiveTime one_phase(double seconds) {
  topologies::CollectiveTime t;
  t.time = units::Seconds(seconds);
  topologies::PhaseTime ph;
  ph.time = units::Seconds(seconds);
  ph.demand[0] = 1.0;
  t.phases.push_back(ph);
  return t;
}

// Stage 0: a 10 us forward, then a 5 us send to stage 1. Stage 1: a 4 us TP collective at the
// start (nothing else running), then a 10 us forward once the send has arrived (15-25 us).
std::vector<StageTally> tally(bool sends_block_sender) {
  hardware::GpuSpec gpu;
  gpu.sms = 132;
  models::StepGraph g(2, gpu, {}, false);
  std::vector<sim::TaskId> none;
  g.add_compute(0, models::TaskKind::forward, 10e-6, &none);
  const std::size_t first = g.size();
  const auto sent = g.add_transfer(0, models::kPpFwdStream, models::TaskKind::pp_send, one_phase(5e-6), g.flush(0), false);
  g.mark_send(first, 1);
  g.add_transfer(1, models::kTpStream, models::TaskKind::tp_comm, one_phase(4e-6), {}, true);
  std::vector<sim::TaskId> after_send{sent};
  g.add_compute(1, models::TaskKind::forward, 10e-6, &after_send);
  const auto run = sim::run_task_graph(g.graph());
  REQUIRE(run.makespan.ps() == 25 * kUs);
  return models::tally_stages(g, run, 2, 0, sends_block_sender);
}

}  // namespace

TEST_CASE("attribution splits idle compute time by the transfers in flight, across streams", "[models][step]") {
  const auto t = tally(true);
  // Stage 0: busy 0-10, its own send 10-15 holds it up, then idle until the step ends at 25.
  CHECK(t[0].ps[models::kTallyForward] == 10 * kUs);
  CHECK(t[0].ps[models::kTallyComputeBusy] == 10 * kUs);
  CHECK(t[0].ps[models::tally_field(models::kTallyExposed, models::Channel::pp)] == 5 * kUs);
  CHECK(t[0].ps[models::kTallyIdle] == 10 * kUs);
  // Stage 1: TP 0-4 exposed, idle 4-10, waiting for the incoming send 10-15, busy 15-25.
  CHECK(t[1].ps[models::tally_field(models::kTallyExposed, models::Channel::tp)] == 4 * kUs);
  CHECK(t[1].ps[models::tally_field(models::kTallyBusy, models::Channel::tp)] == 4 * kUs);
  CHECK(t[1].ps[models::kTallyIdle] == 6 * kUs);
  CHECK(t[1].ps[models::tally_field(models::kTallyExposed, models::Channel::pp)] == 5 * kUs);
  CHECK(t[1].ps[models::kTallyComputeBusy] == 10 * kUs);
}

TEST_CASE("an overlapped send does not hold up its sender", "[models][step]") {
  const auto t = tally(false);
  CHECK(t[0].ps[models::tally_field(models::kTallyExposed, models::Channel::pp)] == 0);
  CHECK(t[0].ps[models::kTallyIdle] == 15 * kUs);
  CHECK(t[1].ps[models::tally_field(models::kTallyExposed, models::Channel::pp)] == 5 * kUs);  // the receiver still waits for it
}

}}  // namespace CLUSTERSIM_TEST_ID
