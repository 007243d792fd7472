// Charts and text a reader can act on (issue 31, item 4): the sweep SVG has a title, a legend and
// round ticks with MFU in %; counts take the noun's number ("1 node", not "1 nodes").
#include <catch2/catch.hpp>

#include <regex>

#include "reporters/sweep_plot.hpp"
#include "studies/counted.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

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
  // A sweep of one configuration on one thread, and a plan search's summary line.
  const auto s =
      run_command(std::string(CLUSTERSIM_BINARY) + " sweep " + CLUSTERSIM_SOURCE_DIR +
                  "/scenarios/7b_256xh100.yaml --vary training.micro_batch=1 --threads 1 --no-progress 2>&1");
  INFO(s.out);
  CHECK(s.out.find("swept 1 configuration (") != std::string::npos);
  CHECK(s.out.find("on 1 thread\n") != std::string::npos);
  CHECK(s.out.find("1 configuration: 1 ok") != std::string::npos);
  // "1 configurations" as a count, not the tail of a rate such as "441 configurations/s".
  CHECK_FALSE(std::regex_search(s.out, std::regex(R"((^|[^0-9.])1 configurations)")));
  const auto p =
      run_command(std::string(CLUSTERSIM_BINARY) +
                  " plan --model llama2-7b --tokens 10G --days 30 --hardware h100-sxm --max-gpus 8 --threads 1 "
                  "--no-progress 2>&1");
  INFO(p.out);
  CHECK(p.out.find("on 1 thread:") != std::string::npos);
}

TEST_CASE("the HTML summary shows the error band beside step time, MFU and days", "[reporters][html]") {
  const std::string html = "/tmp/clustersim_chart_text.html";
  const auto r = run_command(std::string(CLUSTERSIM_BINARY) + " run " + CLUSTERSIM_SOURCE_DIR +
                             "/scenarios/7b_256xh100.yaml --html " + html + " >/dev/null && cat " + html);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("<th>error band</th><td id=\"error_band_high\"") != std::string::npos);
  CHECK(r.out.find("68 % confidence: ") != std::string::npos);
  CHECK(r.out.find("published runs") != std::string::npos);
  CHECK(r.out.find(" s (") != std::string::npos);          // step time low to high
  CHECK(r.out.find(" % (") != std::string::npos);          // MFU low to high
  CHECK(r.out.find(" days (") != std::string::npos);       // days low to high
}

TEST_CASE("the waterfall writes every cause in full, in lines that fit left of the bars", "[reporters][svg]") {
  const std::string svg = "/tmp/clustersim_chart_waterfall.svg";
  const auto r = run_command(std::string(CLUSTERSIM_BINARY) + " run " + CLUSTERSIM_SOURCE_DIR +
                             "/scenarios/70b_512xh100_tp8pp4.yaml --explain --plot " + svg + " >/dev/null && cat " + svg);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("...") == std::string::npos);  // causes were cut at 67 characters
  CHECK(r.out.find("in_step_rate_ratio)]") != std::string::npos);
  std::size_t lines = 0;
  for (std::size_t at = r.out.find("<tspan"); at != std::string::npos; at = r.out.find("<tspan", at + 1), ++lines) {
    const std::size_t from = r.out.find('>', at) + 1, to = r.out.find("</tspan>", at);
    INFO(r.out.substr(from, to - from));
    CHECK(to - from <= 64 + 10);  // 64 characters; an escaped & or < counts a few more bytes
  }
  CHECK(lines > 20);
}

}}  // namespace CLUSTERSIM_TEST_ID
