#include <catch2/catch.hpp>

#include "scenarios/error.hpp"
#include "hardware/csv.hpp"
#include "studies/csv_table.hpp"
#include "studies/sweep_table.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using clustersim::scenarios::ScenarioError;
using clustersim::studies::parse_csv;

TEST_CASE("CSV fields may be quoted, hold commas, doubled quotes and newlines", "[tools][csv]") {
  const auto t = parse_csv("id,notes,x\r\nA-1,\"a, \"\"b\"\"\nc\",3\nA-2,,\n", "t.csv");
  REQUIRE(t.columns == std::vector<std::string>{"id", "notes", "x"});
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].at("notes") == "a, \"b\"\nc");
  CHECK(t.rows[0].at("x") == "3");
  CHECK(t.rows[1].at("notes").empty());
  CHECK(t.rows[1].at("x").empty());
}

TEST_CASE("CSV with a wrong field count or an open quote is rejected with its location", "[tools][csv]") {
  REQUIRE_THROWS_WITH(parse_csv("a,b\n1,2,3\n", "t.csv"), Catch::Contains("t.csv: record 2 has 3 fields"));
  REQUIRE_THROWS_WITH(parse_csv("a,b\n1,\"2\n", "t.csv"), Catch::Contains("t.csv:2: a quoted field is never closed"));
}

TEST_CASE("one CSV reader: a malformed file is a CsvError, not a scenario error, and sweep lines and tables read alike", "[tools][csv]") {
  using clustersim::hardware::CsvError;
  CHECK_THROWS_AS(parse_csv("a,b\n1,2,3\n", "t.csv"), CsvError);
  CHECK_THROWS_AS(parse_csv("", "t.csv"), CsvError);
  CHECK_THROWS_AS(clustersim::studies::read_csv_file("/nonexistent/clustersim.csv"), CsvError);
  bool scenario_error = false;
  try {
    parse_csv("a,b\n1,\"2\n", "t.csv");
  } catch (const ScenarioError&) {
    scenario_error = true;
  } catch (const CsvError&) {
  }
  CHECK(!scenario_error);
  // A merge line with an open quote is an error now, not a silently joined cell.
  CHECK_THROWS_AS(clustersim::studies::parse_csv_line("1,\"open,2"), CsvError);
  const std::string line = "1,\"a, \"\"b\"\"\",,x\r";
  CHECK(clustersim::studies::parse_csv_line(line) == clustersim::hardware::parse_csv_records(line, "l")[0]);
  CHECK(clustersim::studies::parse_csv_line(line) == std::vector<std::string>{"1", "a, \"b\"", "", "x"});
  CHECK(clustersim::studies::parse_csv_line("").size() == 1);
}

}}  // namespace CLUSTERSIM_TEST_ID
