#include <catch2/catch.hpp>

#include "sim/engine.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using clustersim::sim::Engine;
using clustersim::sim::Time;

TEST_CASE("events run in time order and ties in insertion order", "[sim]") {
  Engine e;
  std::vector<int> order;
  e.schedule_at(Time::from_ps(20), [&] { order.push_back(3); });
  e.schedule_at(Time::from_ps(10), [&] { order.push_back(1); });
  e.schedule_at(Time::from_ps(10), [&] { order.push_back(2); });
  e.run();
  REQUIRE(order == std::vector<int>{1, 2, 3});
  REQUIRE(e.now() == Time::from_ps(20));
  REQUIRE(e.events_processed() == 3);
}

TEST_CASE("plain handler events and stored callables share one time order", "[sim]") {
  Engine e;
  std::vector<std::uint64_t> order;
  auto record = [](void* ctx, std::uint64_t arg) { static_cast<std::vector<std::uint64_t>*>(ctx)->push_back(arg); };
  e.schedule_at(Time::from_ps(30), record, &order, 4);
  e.schedule_at(Time::from_ps(10), record, &order, 1);
  e.schedule_at(Time::from_ps(10), [&] {
    order.push_back(2);
    e.schedule_after(Time::from_ps(5), [&] { order.push_back(3); });  // a callable scheduling another
  });
  e.run();
  REQUIRE(order == std::vector<std::uint64_t>{1, 2, 3, 4});
  REQUIRE(e.events_processed() == 4);
}

}}  // namespace CLUSTERSIM_TEST_ID
