// The trace at scale (issue 31, item 4): written as a stream, estimated before it is written
// (the CLI warns above 100 MB), and with --trace-micro-batches N the first N micro-batches in full
// and the steady state folded, as the trace's metadata says.
#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "reporters/trace.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using clustersim::testing::run_command;

namespace {

const std::string kBin = CLUSTERSIM_BINARY;
const std::string k70b = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/70b_512xh100_tp8pp4.yaml";

struct Traced {
  scenarios::Report report;
  std::vector<models::TimelineEntry> timeline;
};

Traced traced(const std::vector<std::string>& sets) {
  const auto sc = scenarios::load_scenario_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/7b_256xh100.yaml", sets);
  Traced t{scenarios::simulate(sc), {}};
  scenarios::simulate(sc, &t.timeline);
  return t;
}

}  // namespace

TEST_CASE("trace_size estimates the written trace within 25 %", "[tools][trace]") {
  const Traced t = traced({"parallelism.tp=2", "parallelism.pp=2", "parallelism.cp=2", "training.global_batch=64",
                           "training.micro_batch=2"});
  for (int n : {-1, 1}) {
    const std::string text = reporters::chrome_trace(t.timeline, t.report, {n});
    const double estimate = reporters::trace_size(t.timeline, t.report, {n}).bytes;
    INFO(n << ": " << text.size() << " bytes, estimated " << estimate);
    CHECK(estimate == Approx(double(text.size())).epsilon(0.25));
  }
}

TEST_CASE("run --trace-micro-batches keeps N micro-batches in full and folds the rest into valid slices", "[tools][trace]") {
  const Traced t = traced({"parallelism.pp=2", "parallelism.dp=128", "training.global_batch=1024"});  // 8 micro-batches
  REQUIRE(t.report.step.micro_batches == 8);
  std::ostringstream streamed;
  reporters::write_chrome_trace(streamed, t.timeline, t.report, {1});
  CHECK(streamed.str() == reporters::chrome_trace(t.timeline, t.report, {1}));
  const YAML::Node trace = YAML::Load(streamed.str());  // JSON is YAML; a syntax error throws
  CHECK(trace["otherData"]["trace_micro_batches"].as<int>() == 1);
  CHECK(trace["otherData"]["folded"].as<std::string>().find("micro-batches 1 to 7") != std::string::npos);
  int folded = 0, kernels = 0;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> spans;  // by (pid, tid)
  for (const auto& ev : trace["traceEvents"]) {
    const std::string cat = ev["cat"] ? ev["cat"].as<std::string>() : "";
    if (cat == "kernel") ++kernels;
    if (ev["ph"].as<std::string>() != "X" || cat == "kernel") continue;
    const int mb = ev["args"]["micro_batch"].as<int>();
    if (cat == "folded") ++folded;
    CHECK((cat == "folded" ? mb >= 1 : mb < 1));
    const double ts = ev["ts"].as<double>();
    spans[{ev["pid"].as<int>(), ev["tid"].as<int>()}].push_back({ts, ts + ev["dur"].as<double>()});
  }
  CHECK(folded > 0);
  CHECK(kernels > 0);
  for (auto& [where, s] : spans) {  // a stream's slices never overlap: the fold nests
    std::sort(s.begin(), s.end());
    for (std::size_t i = 1; i < s.size(); ++i) CHECK(s[i].first >= s[i - 1].second - 1e-6);
  }
}

TEST_CASE("run --trace warns before writing over 100 MB and folds to a small file", "[tools][trace]") {
  const std::string big = "/tmp/clustersim_trace_big.json", small = "/tmp/clustersim_trace_small.json";
  auto r = run_command(kBin + " run " + k70b + " --set training.global_batch=2048 --trace " + big + " 2>&1 >/dev/null");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("warning: --trace " + big + ": writing about") != std::string::npos);
  CHECK(r.out.find("--trace-micro-batches 1") != std::string::npos);
  r = run_command(kBin + " run " + k70b + " --set training.global_batch=2048 --trace " + small +
                  " --trace-micro-batches 1 2>&1 >/dev/null");
  CHECK(r.exit_code == 0);
  CHECK(r.out.empty());
  std::ifstream b(big, std::ios::ate), s(small, std::ios::ate);
  CHECK(double(b.tellg()) > 100e6);
  CHECK(double(s.tellg()) < 10e6);
  std::remove(big.c_str());
  std::remove(small.c_str());
  r = run_command(kBin + " run " + k70b + " --trace-micro-batches 1 2>&1 >/dev/null");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--trace") != std::string::npos);
}

}}  // namespace CLUSTERSIM_TEST_ID
