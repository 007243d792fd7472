// Charts and text a reader can act on (issue 31, item 4): the sweep SVG has a title, a legend and
// round ticks with MFU in %; counts take the noun's number ("1 node", not "1 nodes").
#include <catch2/catch.hpp>

#include "reporters/sweep_plot.hpp"
#include "studies/counted.hpp"
#include "support/scenario_fixture.hpp"

using namespace clustersim;
using clustersim::testing::run_command;

TEST_CASE("the sweep chart has a title, a legend and round ticks, MFU in percent", "[reporters][svg]") {
  const std::string svg = reporters::sweep_plot_svg({{"1", 0.431}, {"2", 0.552}, {"4", 0.517}}, "training.micro_batch", "mfu",
                                                    true, "sweep of s.yaml: mfu by training.micro_batch");
  CHECK(svg.find(">sweep of s.yaml: mfu by training.micro_batch</text>") != std::string::npos);
  CHECK(svg.find(">MFU (%)</text>") != std::string::npos);
  CHECK(svg.find(">each configuration</text>") != std::string::npos);
  CHECK(svg.find("best per training.micro_batch") != std::string::npos);
  for (const char* tick : {">0</text>", ">20</text>", ">40</text>", ">60</text>"}) CHECK(svg.find(tick) != std::string::npos);
  CHECK(svg.find(">0.552") == std::string::npos);  // no raw fraction as a tick
  const std::string days = reporters::sweep_plot_svg({{"a", 37.0}, {"b", 81.0}}, "x", "days_to_train", false);
  for (const char* tick : {">0</text>", ">20</text>", ">80</text>", ">100</text>"}) CHECK(days.find(tick) != std::string::npos);
  CHECK(days.find(">days_to_train by x</text>") != std::string::npos);
}

TEST_CASE("counts take the number of their noun", "[reporters][text]") {
  CHECK(studies::counted(1, "node") == "1 node");
  CHECK(studies::counted(2, "node") == "2 nodes");
  CHECK(studies::counted(0, "GPU") == "0 GPUs");
  const auto r = run_command(std::string(CLUSTERSIM_BINARY) + " run " + CLUSTERSIM_SOURCE_DIR +
                             "/scenarios/7b_256xh100.yaml --set cluster.gpus=8 --set parallelism.dp=8 --set training.global_batch=64");
  INFO(r.out);
  CHECK(r.out.find("8 GPUs = 1 node x 8") != std::string::npos);
  const auto c = run_command(std::string(CLUSTERSIM_BINARY) + " collective --nodes 1 --sizes 1MB");
  CHECK(c.out.find("1 node x 8 GPUs") != std::string::npos);
  CHECK(c.out.find("node(s)") == std::string::npos);
}
