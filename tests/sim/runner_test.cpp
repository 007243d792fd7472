#include <catch2/catch.hpp>

#include <thread>

#include "sim/runner.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::sim;

namespace {
Task task(int stream, std::int64_t work_ps, std::vector<TaskId> deps = {}, std::vector<ResourceUse> uses = {},
          int priority = 0) {
  Task t;
  t.stream = stream;
  t.work = Time::from_ps(work_ps);
  t.deps = std::move(deps);
  t.uses = std::move(uses);
  t.priority = priority;
  return t;
}
}  // namespace

TEST_CASE("tasks on one stream run back to back in FIFO order", "[sim]") {
  TaskGraph g;
  g.add(task(0, 100));
  g.add(task(0, 50));
  auto r = run_task_graph(g);
  REQUIRE(r.timing[0].end == Time::from_ps(100));
  REQUIRE(r.timing[1].start == Time::from_ps(100));
  REQUIRE(r.makespan == Time::from_ps(150));
}

TEST_CASE("tasks on two streams overlap unless a dependency orders them", "[sim]") {
  TaskGraph g;
  auto a = g.add(task(0, 100));
  g.add(task(1, 80));
  g.add(task(1, 30, {a}));  // waits for a, and for the stream's previous task
  auto r = run_task_graph(g);
  REQUIRE(r.timing[1].start == Time::from_ps(0));
  REQUIRE(r.timing[2].start == Time::from_ps(100));
  REQUIRE(r.makespan == Time::from_ps(130));
}

TEST_CASE("two tasks demanding a whole resource share it equally", "[sim]") {
  TaskGraph g;
  g.add(task(0, 100, {}, {{0, 1.0}}));
  g.add(task(1, 100, {}, {{0, 1.0}}));
  auto r = run_task_graph(g);
  REQUIRE(r.timing[0].end == Time::from_ps(200));
  REQUIRE(r.timing[1].end == Time::from_ps(200));
}

TEST_CASE("a high-priority task takes its share first, the rest is slowed while it runs", "[sim]") {
  TaskGraph g;
  g.add(task(0, 1000, {}, {{0, 1.0}}));            // compute on all SMs
  g.add(task(1, 400, {}, {{0, 0.2}}, /*priority*/ 1));  // comm holding 20% of SMs
  auto r = run_task_graph(g);
  REQUIRE(r.timing[1].end == Time::from_ps(400));
  // 400 ps at rate 0.8 does 320 ps of work; the remaining 680 run at full rate.
  REQUIRE(r.timing[0].end == Time::from_ps(1080));
}

TEST_CASE("a dependency cycle is reported, not hung on", "[sim]") {
  TaskGraph g;
  g.add(task(0, 10, {1}));
  g.add(task(1, 10, {0}));
  REQUIRE_THROWS_AS(run_task_graph(g), std::logic_error);
}

// run_task_graph keeps one Runner per thread and reuses its buffers: a graph run after others,
// one of them refused mid-load and one failing after its engine ran, must give exactly what
// it gives on a thread that has run nothing yet.
TEST_CASE("a reused runner gives what a fresh one gives, also after failed runs", "[sim]") {
  TaskGraph b;
  const TaskId a0 = b.add(task(0, 1000, {}, {{0, 1.0}}));
  b.add(task(1, 400, {}, {{0, 0.3}, {1, 1.0}}, 1));
  b.add(task(2, 700, {}, {{1, 0.5}}));
  b.add(task(0, 0, {a0}, {{1, 0.5}}));
  b.add(task(3, 250, {a0}, {{0, 0.6}, {1, 0.6}}));
  RunResult fresh;
  std::thread([&] { fresh = run_task_graph(b); }).join();

  TaskGraph big;  // more tasks, streams and resources than b, left half-run by a cycle
  for (int i = 0; i < 40; ++i) big.add(task(i % 7, 100 + 13 * i, {}, {{i % 5, 0.4 + 0.01 * i}}, i % 3));
  big.add(task(8, 10, {41}, {{2, 1.0}}));
  big.add(task(9, 10, {40}, {{3, 1.0}}));
  REQUIRE_THROWS_AS(run_task_graph(big), std::logic_error);
  TaskGraph unknown;
  unknown.add(task(0, 10, {}, {{0, 1.0}}));
  unknown.add(task(1, 10, {7}));
  REQUIRE_THROWS_AS(run_task_graph(unknown), std::logic_error);

  const RunResult again = run_task_graph(b);
  REQUIRE(again.timing.size() == fresh.timing.size());
  for (std::size_t i = 0; i < fresh.timing.size(); ++i) {
    CHECK(again.timing[i].start == fresh.timing[i].start);
    CHECK(again.timing[i].end == fresh.timing[i].end);
  }
  CHECK(again.makespan == fresh.makespan);
  CHECK(again.events == fresh.events);
  CHECK(fresh.makespan > Time::from_ps(1000));  // the sharing slowed something down
}

}}  // namespace CLUSTERSIM_TEST_ID
