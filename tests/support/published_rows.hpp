#pragma once
// Looking up one row of a published-runs table by id, for tests.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "studies/csv_table.hpp"

namespace clustersim::testing {

/// The row of `table` whose id is `id`; fails the test when there is none.
inline const std::map<std::string, std::string>& row_with_id(const studies::CsvTable& table, const std::string& id) {
  for (const auto& r : table.rows)
    if (r.at("id") == id) return r;
  FAIL("no published row " << id);
  return table.rows.front();
}

}  // namespace clustersim::testing
