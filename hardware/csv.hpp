#pragma once
// The one CSV reader (RFC 4180: quoted fields may hold commas, doubled quotes and newlines), in the
// lowest layer that reads CSV (the measured attention rows, hardware/kernels/attention.csv). The
// published-runs tables (studies/csv_table.hpp) and the sweep files `merge` reads back
// (studies/sweep_table.hpp) read through it. Every field is kept as text; callers convert.
#include <stdexcept>
#include <string>
#include <vector>

namespace clustersim::hardware {

/// Malformed CSV text: what() names the source and line. Not a scenario mistake, so not a
/// scenarios::ScenarioError; the CLI reports it the same way (one line, exit 2).
class CsvError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The records of `text` (the header is the first), skipping blank lines; `source` names it in
/// errors. Throws CsvError when a quoted field is never closed.
std::vector<std::vector<std::string>> parse_csv_records(const std::string& text, const std::string& source);

}  // namespace clustersim::hardware
