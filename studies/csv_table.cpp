#include "studies/csv_table.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "scenarios/error.hpp"

namespace clustersim::studies {

CsvTable parse_csv(const std::string& text, const std::string& source) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, any = false;
  int line = 1, quote_line = 0;
  auto end_field = [&] { record.push_back(std::move(field)); field.clear(); };
  auto end_record = [&] {
    end_field();
    if (!(record.size() == 1 && record[0].empty())) records.push_back(std::move(record));
    record.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    any = true;
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else {
        if (c == '\n') ++line;
        field += c;
      }
    } else if (c == '"') {
      quoted = true, quote_line = line;
    } else if (c == ',') {
      end_field();
    } else if (c == '\n') {
      end_record();
      ++line;
    } else if (c != '\r') {
      field += c;
    }
  }
  if (quoted) throw scenarios::ScenarioError(fmt::format("{}:{}: a quoted field is never closed", source, quote_line));
  if (any && (!field.empty() || !record.empty())) end_record();
  CsvTable t;
  if (records.empty()) throw scenarios::ScenarioError(fmt::format("{}: the CSV file is empty", source));
  t.columns = records[0];
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != t.columns.size())
      throw scenarios::ScenarioError(fmt::format("{}: record {} has {} fields but the header has {}", source, r + 1,
                                                 records[r].size(), t.columns.size()));
    std::map<std::string, std::string> row;
    for (std::size_t c = 0; c < t.columns.size(); ++c) row[t.columns[c]] = records[r][c];
    t.rows.push_back(std::move(row));
  }
  return t;
}

CsvTable read_csv_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw scenarios::ScenarioError(fmt::format("{}: cannot open the CSV file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_csv(ss.str(), path);
}

}  // namespace clustersim::studies
