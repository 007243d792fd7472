#include <catch2/catch.hpp>

#include "sim/engine.hpp"

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
