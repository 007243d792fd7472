#include <catch2/catch.hpp>

#include "scenarios/error.hpp"
#include "studies/json_value.hpp"
#include "studies/metrics.hpp"
#include "studies/sweep_table.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::studies;
using Strings = std::vector<std::string>;

TEST_CASE("metric columns are the keys of run --json, flattened", "[tools][sweep]") {
  const auto& cols = metric_columns();
  for (const char* k : {"step_time_s", "mfu", "days_to_train", "peak_memory_bytes", "breakdown.forward_s",
                        "memory.capacity_bytes", "simulated_events"})
    CHECK(std::find(cols.begin(), cols.end(), k) != cols.end());
  const auto flat = flatten_json("{\n  \"a\": 1,\n  \"b\": {\n    \"c\": \"x, \\\"y\\\"\",\n    \"d\": null\n  },\n  \"e\": true\n}");
  REQUIRE(flat.size() == 4);
  CHECK(flat[1] == std::make_pair(std::string("b.c"), std::string("x, \"y\"")));
  CHECK(flat[2].second == "null");
  CHECK_THROWS(flatten_json("{\"a\": 1"));
  const auto with_array = flatten_json("{\"s\": [{\"x\": 1, \"y\": \"]\"}, {\"x\": 2}],\n \"t\": 3}");
  REQUIRE(with_array.size() == 2);
  CHECK(with_array[0].second == "[{\"x\":1,\"y\":\"]\"},{\"x\":2}]");
  CHECK(with_array[1].second == "3");
}

TEST_CASE("cells become JSON numbers only when they are numbers", "[tools][sweep]") {
  CHECK(json_cell_value("8") == Json(8));
  CHECK(json_dump(json_cell_value("1e12")) == "1000000000000");  // the value, in the library's spelling
  CHECK(json_cell_value("").is_null());
  CHECK(json_cell_value("full") == Json("full"));
  CHECK(json_cell_value("nan") == Json("nan"));
  CHECK(json_cell_value("0x10") == Json("0x10"));
  CHECK(json_cell_value("-0.5e-3") == Json(-0.0005));
  CHECK(json_cell_value("true") == Json("true"));  // a cell is a number or text, never a boolean
  for (const std::string not_json : {"08", "+5", ".5", "5.", "1e", "--1", "inf", " 8", "8 "})
    CHECK(json_cell_value(not_json) == Json(not_json));
}

TEST_CASE("CSV cells round-trip through quoting", "[tools][sweep]") {
  const Strings cells{"1", "a,b", "say \"hi\"", "", "plain"};
  std::string line = csv_line(cells);
  REQUIRE(line.back() == '\n');
  line.pop_back();
  CHECK(parse_csv_line(line) == cells);
}

TEST_CASE("top-k ranks ok rows by their typed figures, ties to the lower index", "[tools][sweep]") {
  const Strings header{"index", "status", "mfu", "step_time_s", "days_to_train", "gpu_hours"};
  TopK by_mfu(RankBy::mfu, 2);
  TopK by_step(RankBy::step_time, 2);
  TopK by_cost(RankBy::cost, 1);
  const std::vector<Strings> rows{{"0", "ok", "0.5", "2", "10", "100"},
                                  {"1", "invalid", "", "", "", ""},
                                  {"2", "ok", "0.6", "3", "9", "90"},
                                  {"3", "ok", "0.5", "1", "8", "80"},
                                  {"4", "out_of_memory", "", "", "", ""}};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto f = FigureColumns(header).read(rows[i]);
    CHECK(f.has_value() == (rows[i][1] == "ok"));
    by_mfu.offer(i, f, rows[i]), by_step.offer(i, f, rows[i]), by_cost.offer(i, f, rows[i]);
  }
  REQUIRE(by_mfu.rows().size() == 2);
  CHECK(by_mfu.rows()[0][0] == "2");
  CHECK(by_mfu.rows()[1][0] == "0");
  CHECK(by_step.rows()[0][0] == "3");
  CHECK(by_cost.rows()[0][0] == "3");  // fewest GPU-hours
  CHECK(by_mfu.considered() == 3);
  // A figure that is not positive and finite does not rank.
  TopK zero(RankBy::days, 3);
  zero.offer(7, RowFigures{0.4, 1.0, 0.0, 0.0, 0.0}, {"7"});
  CHECK(zero.considered() == 0);
  CHECK_THROWS_AS(parse_rank_by("speed"), clustersim::scenarios::ScenarioError);
  CHECK_THROWS_AS(FigureColumns(Strings{"index", "status"}), clustersim::scenarios::ScenarioError);
}

TEST_CASE("rejection reasons that differ only in numbers are counted together", "[tools][sweep]") {
  ReasonTally t;
  t.add("needs 81.2 GiB of 80");
  t.add("unknown key 'vpp'");
  t.add("needs 93.0 GiB of 80");
  const auto common = t.most_common(5);
  REQUIRE(common.size() == 2);
  CHECK(common[0] == std::make_pair(std::uint64_t(2), std::string("needs 81.2 GiB of 80")));
  CHECK(common[1].first == 1);
}

}}  // namespace CLUSTERSIM_TEST_ID
