#pragma once
// A CSV file with a header row, read by the one CSV reader (hardware/csv.hpp: RFC 4180, quoted
// fields may hold commas, quotes doubled and newlines). Every field is kept as text; callers convert.
#include <map>
#include <string>
#include <vector>

namespace clustersim::studies {

struct CsvTable {
  std::vector<std::string> columns;
  std::vector<std::map<std::string, std::string>> rows;  ///< column name → field
};

/// Parses CSV text; `source` names it in errors. Throws hardware::CsvError when a row has a
/// different number of fields than the header, a quote is left open or the text is empty.
CsvTable parse_csv(const std::string& text, const std::string& source);
CsvTable read_csv_file(const std::string& path);

}  // namespace clustersim::studies
