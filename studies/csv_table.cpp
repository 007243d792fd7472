#include "studies/csv_table.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "hardware/csv.hpp"

namespace clustersim::studies {

CsvTable parse_csv(const std::string& text, const std::string& source) {
  const auto records = hardware::parse_csv_records(text, source);
  CsvTable t;
  if (records.empty()) throw hardware::CsvError(fmt::format("{}: the CSV file is empty", source));
  t.columns = records[0];
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != t.columns.size())
      throw hardware::CsvError(fmt::format("{}: record {} has {} fields but the header has {}", source, r + 1,
                                                 records[r].size(), t.columns.size()));
    std::map<std::string, std::string> row;
    for (std::size_t c = 0; c < t.columns.size(); ++c) row[t.columns[c]] = records[r][c];
    t.rows.push_back(std::move(row));
  }
  return t;
}

CsvTable read_csv_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw hardware::CsvError(fmt::format("{}: cannot open the CSV file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_csv(ss.str(), path);
}

}  // namespace clustersim::studies
