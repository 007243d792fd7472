#pragma once
// Reading one of the compiled-in tables of data/validation/: its header checked for the columns
// the reader needs, each row made into a value with its "file:line" for errors.
#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "scenarios/error.hpp"
#include "studies/csv_table.hpp"

namespace clustersim::studies {

/// The rows of the table `text` (`name` in errors), each made by make(row, "name:line"), after
/// checking that every column of `columns` is there.
template <class T, class Make>
std::vector<T> read_table(const char* text, const std::string& name, std::initializer_list<const char*> columns, Make make) {
  const CsvTable t = parse_csv(text, name);
  for (const char* col : columns)
    if (std::find(t.columns.begin(), t.columns.end(), col) == t.columns.end())
      throw scenarios::ScenarioError(fmt::format("{}:1: missing column '{}'", name, col));
  std::vector<T> out;
  for (std::size_t i = 0; i < t.rows.size(); ++i) out.push_back(make(t.rows[i], fmt::format("{}:{}", name, i + 2)));
  return out;
}

}  // namespace clustersim::studies
