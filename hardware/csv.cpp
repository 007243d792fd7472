#include "hardware/csv.hpp"

namespace clustersim::hardware {

std::vector<std::vector<std::string>> parse_csv_records(const std::string& text, const std::string& source) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;
  int line = 1, quote_line = 0;
  auto end_field = [&] { record.push_back(std::move(field)); field.clear(); };
  auto end_record = [&] {
    end_field();
    if (!(record.size() == 1 && record[0].empty())) records.push_back(std::move(record));
    record.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
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
  if (quoted) throw CsvError(source + ":" + std::to_string(quote_line) + ": a quoted field is never closed");
  if (!field.empty() || !record.empty()) end_record();
  return records;
}

}  // namespace clustersim::hardware
