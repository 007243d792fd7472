#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "scenarios/explain.hpp"
#include "support/scenario_fixture.hpp"
#include "reporters/html_report.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

const std::string kBin = CLUSTERSIM_BINARY;
const std::string kSrc = CLUSTERSIM_SOURCE_DIR;

// A tiny XHTML-ish checker: every `<x>` is closed by `</x>` in order (or written `<x/>`),
// no stray `<`, and every `&` starts an entity. Returns "" when well formed, else the first problem.
std::string well_formed(const std::string& html) {
  std::vector<std::string> open;
  static const std::regex entity("&(#[0-9]+|[a-z]+);");
  for (std::size_t i = 0; i < html.size(); ++i) {
    if (html[i] == '&') {
      std::smatch m;
      const std::string rest = html.substr(i, 12);
      if (!std::regex_search(rest, m, entity) || m.position(0) != 0) return "bare & at " + std::to_string(i);
      continue;
    }
    if (html[i] != '<') continue;
    if (html.compare(i, 9, "<!DOCTYPE") == 0) {
      i = html.find('>', i);
      continue;
    }
    const auto end = html.find('>', i);
    if (end == std::string::npos) return "unterminated tag at " + std::to_string(i);
    std::string tag = html.substr(i + 1, end - i - 1);
    if (tag.empty() || !(std::isalpha(static_cast<unsigned char>(tag[0])) || tag[0] == '/'))
      return "stray < at " + std::to_string(i);
    if (tag.find('<') != std::string::npos) return "< inside a tag at " + std::to_string(i);
    const bool closing = tag[0] == '/', self_closing = tag.back() == '/';
    const std::string name = tag.substr(closing, tag.find_first_of(" /\n", closing) - closing);
    if (closing) {
      if (open.empty() || open.back() != name) return "</" + name + "> closes <" + (open.empty() ? "" : open.back()) + ">";
      open.pop_back();
    } else if (!self_closing) {
      open.push_back(name);
    }
    i = end;
  }
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

std::string data_value(const std::string& html, const std::string& id) {
  std::smatch m;
  const std::regex re("id=\"" + id + "\" data-value=\"([^\"]+)\"");
  REQUIRE(std::regex_search(html, m, re));
  return m[1];
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

std::string run_page(const scenarios::Scenario& sc, scenarios::Report* out = nullptr) {
  const scenarios::Report r = scenarios::simulate(sc);
  std::vector<models::TimelineEntry> timeline;
  scenarios::simulate(sc, &timeline);
  if (out) *out = r;
  return reporters::run_html(r, scenarios::explain(sc, r), timeline);
}

}  // namespace

TEST_CASE("the well-formedness checker rejects what it should", "[tools][html]") {
  CHECK(well_formed("<p>a <b>b</b><br/></p>").empty());
  CHECK_FALSE(well_formed("<p>a <b>b</p></b>").empty());
  CHECK_FALSE(well_formed("<p>a").empty());
  CHECK_FALSE(well_formed("<p>a < b</p>").empty());
  CHECK_FALSE(well_formed("<p>a & b</p>").empty());
}

TEST_CASE("run --html: well formed, every section, the report's numbers, no URL", "[tools][html]") {
  const auto sc = scenarios::load_scenario_file(kSrc + "/scenarios/70b_512xh100_tp8pp4.yaml");
  scenarios::Report r;
  const std::string html = run_page(sc, &r);
  CHECK(well_formed(html).empty());
  INFO(well_formed(html));
  for (const char* id : {"summary", "waterfall", "memory", "timeline", "roofline"})
    CHECK(html.find(fmt::format("<section id=\"{}\">", id)) != std::string::npos);
  CHECK(std::stod(data_value(html, "step_time_s")) == r.step_time_s);
  CHECK(std::stod(data_value(html, "mfu")) == r.mfu);
  CHECK(std::stod(data_value(html, "tokens_per_s")) == r.tokens_per_s);
  CHECK(std::stod(data_value(html, "peak_memory_bytes")) == r.memory.total_bytes);
  CHECK(std::stod(data_value(html, "days_to_train")) == r.days_to_train);
  CHECK(html.find(fmt::format(">{:.1f} %<", 100 * r.mfu)) != std::string::npos);
  // One memory bar and one timeline compute row per pipeline stage (pp 4).
  REQUIRE(sc.parallel.pp == 4);
  CHECK(count(html, ": weights ") == 4);
  for (int s = 0; s < 4; ++s) CHECK(count(html, fmt::format(">stage {} compute<", s)) == 1);
  CHECK(html.find("http") == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
}

TEST_CASE("run --html escapes the scenario's name", "[tools][html]") {
  const std::string yaml = testing::scenario_text("llama2-7b", "h100-sxm", 8, 2048, 8);
  auto sc = scenarios::load_scenario_string(yaml);
  sc.name = "a <b> & \"c\"";
  const std::string html = run_page(sc);
  CHECK(well_formed(html).empty());
  CHECK(html.find("<b>") == std::string::npos);
  CHECK(html.find("<h1>a &lt;b&gt; &amp; \"c\"</h1>") != std::string::npos);
  CHECK(html.find("<title>a &lt;b&gt; &amp; \"c\" — clustersim</title>") != std::string::npos);
}

TEST_CASE("study page: the Pareto front of cost against days, the table's numbers", "[tools][html]") {
  const std::vector<std::string> header = {"index", "parallelism.tp", "status", "mfu", "days_to_train", "gpu_hours", "cost_usd"};
  reporters::StudyHtml page("sweep of <x>", header, {"parallelism.tp"}, "mfu", true);
  // (days, cost): A(10,100) and B(12,80) are the front; C(11,120) loses to A; D(15,90) to B.
  const std::vector<std::vector<std::string>> rows = {{"0", "1", "ok", "0.5", "10", "50", "100"},
                                                      {"1", "2", "ok", "0.4", "12", "40", "80"},
                                                      {"2", "4", "ok", "0.3", "11", "60", "120"},
                                                      {"3", "8", "ok", "0.2", "15", "45", "90"},
                                                      {"4", "16", "out_of_memory", "", "", "", ""}};
  for (const auto& r : rows) page.offer(r);
  const auto spec = page.chart();
  REQUIRE(spec.points.size() == 4);
  CHECK(spec.y_label == "cost (USD)");
  REQUIRE(spec.front.size() == 2);
  CHECK(spec.points[spec.front[0]].x == 10);
  CHECK(spec.points[spec.front[1]].y == 80);
  page.add_table("top 2 by mfu", {rows[0], rows[1]});
  const std::string html = page.render();
  CHECK(well_formed(html).empty());
  CHECK(count(html, "class=\"front\"") == 2);
  CHECK(html.find("<td data-key=\"mfu\" data-value=\"0.4\">40.0 %</td>") != std::string::npos);
  CHECK(html.find("sweep of &lt;x&gt;") != std::string::npos);
  CHECK(html.find("http") == std::string::npos);
}

TEST_CASE("study page without days: the metric against the first swept key, best per value", "[tools][html]") {
  const std::vector<std::string> header = {"index", "training.recompute", "status", "mfu", "days_to_train", "gpu_hours"};
  reporters::StudyHtml page("sweep", header, {"training.recompute"}, "mfu", true);
  page.offer({"0", "none", "ok", "0.5", "", ""});
  page.offer({"1", "full", "ok", "0.4", "", ""});
  page.offer({"2", "none", "ok", "0.6", "", ""});
  const auto spec = page.chart();
  CHECK(spec.x_categories == std::vector<std::string>{"none", "full"});
  REQUIRE(spec.front.size() == 2);
  CHECK(spec.points[spec.front[0]].y == 0.6);
  CHECK(spec.points[spec.front[1]].y == 0.4);
}

TEST_CASE("clustersim run / sweep --html write a well-formed file", "[tools][html]") {
  const std::string run_out = "/tmp/clustersim_test_run.html", sweep_out = "/tmp/clustersim_test_sweep.html";
  std::remove(run_out.c_str());
  std::remove(sweep_out.c_str());
  auto r = testing::run_command(kBin + " run " + kSrc + "/scenarios/7b_256xh100.yaml --html " + run_out + " >/dev/null 2>&1");
  REQUIRE(r.exit_code == 0);
  std::stringstream a;
  a << std::ifstream(run_out).rdbuf();
  CHECK(well_formed(a.str()).empty());
  CHECK(a.str().find("<section id=\"timeline\">") != std::string::npos);
  r = testing::run_command(kBin + " sweep " + kSrc + "/scenarios/7b_256xh100.yaml --vary training.micro_batch=1,2,4 "
                           "--set training.tokens=1e12 --no-progress --html " + sweep_out + " >/dev/null 2>&1");
  REQUIRE(r.exit_code == 0);
  std::stringstream b;
  b << std::ifstream(sweep_out).rdbuf();
  CHECK(well_formed(b.str()).empty());
  CHECK(b.str().find("GPU-hours against days to train") != std::string::npos);
  // micro-batch 4 does not fit: two ranked rows, and the note says so.
  CHECK(count(b.str(), "<td data-key=\"mfu\"") == 2);
  CHECK(b.str().find("3 configurations (shard 0/1 of 3): 2 ok, 1 out of memory, 0 invalid") != std::string::npos);
}

TEST_CASE("clustersim plan --html: the deadline among the plans, the front and both tables", "[tools][html]") {
  const std::string out = "/tmp/clustersim_test_plan.html";
  std::remove(out.c_str());
  const auto r = testing::run_command(kBin + " plan --model llama2-7b --tokens 1e9 --days 0.3 --max-gpus 8 --gpu-step 2 --global-batch 16 "
                                      "--seq-len 2048 --threads 1 --no-progress --html " + out + " >/dev/null 2>&1");
  REQUIRE(r.exit_code == 0);
  std::stringstream s;
  s << std::ifstream(out).rdbuf();
  const std::string html = s.str();
  CHECK(well_formed(html).empty());
  CHECK(html.find("GPU-hours against days to train") != std::string::npos);
  CHECK(html.find(">deadline 0.3 days<") != std::string::npos);
  // 2, 4 and 8 GPUs take about 0.5, 0.25 and 0.12 days for 1e9 tokens: the deadline splits them.
  CHECK(count(html, "class=\"front\"") >= 2);
  CHECK(html.find("<h2>cheapest plans meeting 0.3 days</h2>") != std::string::npos);
  CHECK(html.find("<h2>fastest plan per GPU count</h2>") != std::string::npos);
  CHECK(html.find("http") == std::string::npos);
}

}}  // namespace CLUSTERSIM_TEST_ID
