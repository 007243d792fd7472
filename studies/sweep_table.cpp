#include "studies/sweep_table.hpp"

#include "studies/json_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "scenarios/error.hpp"
#include "scenarios/simulate.hpp"

namespace clustersim::studies {
namespace {

// A reader for the JSON that format_json writes: objects, strings, numbers, literals.
class JsonFlattener {
 public:
  explicit JsonFlattener(const std::string& s) : s_(s) {}
  std::vector<std::pair<std::string, std::string>> run() {
    object("");
    skip_ws();
    if (i_ != s_.size()) fail("trailing text");
    return std::move(out_);
  }

 private:
  void object(const std::string& prefix) {
    expect('{');
    skip_ws();
    if (peek() == '}') return void(++i_);
    for (;;) {
      skip_ws();
      const std::string key = prefix + string();
      skip_ws();
      expect(':');
      skip_ws();
      if (peek() == '{') object(key + ".");
      else if (peek() == '"') out_.emplace_back(key, string());
      else if (peek() == '[') out_.emplace_back(key, compact_json(array_text()));
      else out_.emplace_back(key, literal());
      skip_ws();
      if (peek() == ',') { ++i_; continue; }
      expect('}');
      return;
    }
  }
  std::string string() {
    expect('"');
    std::string v;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c == '\\' && i_ < s_.size()) {
        c = s_[i_++];
        if (c == 'u' && i_ + 4 <= s_.size()) {
          v += char(std::stoi(s_.substr(i_, 4), nullptr, 16));
          i_ += 4;
          continue;
        }
        if (c == 'n') c = '\n';
        else if (c == 't') c = '\t';
      }
      v += c;
    }
    expect('"');
    return v;
  }
  // An array stays one value: its JSON text (a CSV cell holds e.g. memory per pipeline stage).
  std::string array_text() {
    const std::size_t start = i_;
    int depth = 0;
    bool in_string = false;
    for (; i_ < s_.size(); ++i_) {
      const char c = s_[i_];
      if (in_string) {
        if (c == '\\') ++i_;
        else if (c == '"') in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '[' || c == '{') {
        ++depth;
      } else if ((c == ']' || c == '}') && --depth == 0) {
        return s_.substr(start, ++i_ - start);
      }
    }
    fail("unterminated array");
  }
  std::string literal() {
    const std::size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && !std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    if (i_ == start) fail("expected a value");
    return s_.substr(start, i_ - start);
  }
  void skip_ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void expect(char c) {
    if (peek() != c) fail(fmt::format("expected '{}'", c));
    ++i_;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(fmt::format("report JSON at offset {}: {}", i_, what));
  }

  const std::string& s_;
  std::size_t i_ = 0;
  std::vector<std::pair<std::string, std::string>> out_;
};

double to_double(const std::string& s) {
  if (s.empty() || s == "null") return std::nan("");
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    return used == s.size() ? v : std::nan("");
  } catch (const std::exception&) {
    return std::nan("");
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> flatten_json(const std::string& json) {
  return JsonFlattener(json).run();
}

std::string compact_json(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  bool in_string = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < json.size()) out += json[++i];
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
      out += c;
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      out += c;
    }
  }
  return out;
}

// JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
bool is_json_number(const std::string& s) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    return i > start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') ++i;
  else if (!digits()) return false;
  if (i < s.size() && s[i] == '.' && (++i, !digits())) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

std::string json_scalar(const std::string& cell) {
  if (cell.empty()) return "null";
  return is_json_number(cell) ? cell : json_quote(cell);
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string out;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i) out += ',';
    const std::string& c = cells[i];
    if (c.find_first_of(",\"\n\r") == std::string::npos) {
      out += c;
      continue;
    }
    out += '"';
    for (char ch : c) {
      if (ch == '"') out += '"';
      out += ch == '\n' || ch == '\r' ? ' ' : ch;
    }
    out += '"';
  }
  return out + "\n";
}

std::vector<std::string> parse_csv_line(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') cells.back() += '"', ++i;
      else if (c == '"') quoted = false;
      else cells.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else if (c != '\r') {
      cells.back() += c;
    }
  }
  return cells;
}

RankBy parse_rank_by(const std::string& text) {
  if (text == "mfu") return RankBy::mfu;
  if (text == "step_time") return RankBy::step_time;
  if (text == "days") return RankBy::days;
  if (text == "cost") return RankBy::cost;
  throw scenarios::ScenarioError(fmt::format("--by {}: allowed: mfu, step_time, days, cost", text));
}

const char* name(RankBy by) {
  switch (by) {
    case RankBy::mfu: return "mfu";
    case RankBy::step_time: return "step_time";
    case RankBy::days: return "days";
    case RankBy::cost: return "cost";
  }
  return "?";
}

void ReasonTally::add(const std::string& reason) {
  std::string shape;
  for (char c : reason) {
    const bool digit = std::isdigit(static_cast<unsigned char>(c)) != 0;
    if (!digit) shape += c;
    else if (shape.empty() || shape.back() != '#') shape += '#';
  }
  auto it = by_shape_.find(shape);
  if (it == by_shape_.end()) {
    if (by_shape_.size() >= 10000) return;  // bounded memory on pathological inputs
    it = by_shape_.emplace(shape, Entry{0, seen_++, reason}).first;
  }
  ++it->second.count;
}

std::vector<std::pair<std::uint64_t, std::string>> ReasonTally::most_common(std::size_t n) const {
  std::vector<const Entry*> entries;
  for (const auto& [shape, e] : by_shape_) entries.push_back(&e);
  std::sort(entries.begin(), entries.end(), [](const Entry* a, const Entry* b) {
    return a->count != b->count ? a->count > b->count : a->first_seen < b->first_seen;
  });
  std::vector<std::pair<std::uint64_t, std::string>> out;
  for (std::size_t i = 0; i < entries.size() && i < n; ++i) out.emplace_back(entries[i]->count, entries[i]->example);
  return out;
}

std::optional<std::size_t> column_of(const std::vector<std::string>& header, const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  if (it == header.end()) return std::nullopt;
  return std::size_t(it - header.begin());
}

TopK::TopK(const std::vector<std::string>& header, RankBy by, std::size_t k) : descending_(by == RankBy::mfu), k_(k) {
  const char* key = by == RankBy::mfu ? "mfu" : by == RankBy::step_time ? "step_time_s"
                  : by == RankBy::days ? "days_to_train" : "gpu_hours";
  const auto s = column_of(header, "status"), c = column_of(header, key);
  if (!s || !c) throw scenarios::ScenarioError(fmt::format("the table has no 'status' or '{}' column to rank by", key));
  status_col_ = *s;
  key_col_ = *c;
}

void TopK::offer(std::uint64_t index, const std::vector<std::string>& cells) {
  if (k_ == 0 || cells.size() <= std::max(status_col_, key_col_) || cells[status_col_] != "ok") return;
  const double v = to_double(cells[key_col_]);
  if (!std::isfinite(v) || v <= 0) return;
  ++considered_;
  const double order_key = descending_ ? -v : v;
  if (best_.size() == k_) {
    const Entry& worst = *best_.rbegin();
    if (!(Entry{order_key, index, {}} < worst)) return;
    best_.erase(std::prev(best_.end()));
  }
  best_.insert(Entry{order_key, index, cells});
}

std::vector<std::vector<std::string>> TopK::rows() const {
  std::vector<std::vector<std::string>> out;
  for (const auto& e : best_) out.push_back(e.cells);
  return out;
}

std::string format_top_table(const std::vector<std::string>& header, const std::vector<std::string>& config_columns,
                             const std::vector<std::vector<std::string>>& rows) {
  struct Col {
    std::string title;
    std::optional<std::size_t> at;
    std::string (*show)(const std::string&);
  };
  auto raw = [](const std::string& s) { return s; };
  std::vector<Col> cols{{"#", std::nullopt, +raw}, {"index", column_of(header, "index"), +raw}};
  for (const auto& c : config_columns) {
    const auto dot = c.rfind('.');
    cols.push_back({dot == std::string::npos ? c : c.substr(dot + 1), column_of(header, c), +raw});
  }
  cols.push_back({"MFU %", column_of(header, "mfu"), +[](const std::string& s) {
                    const double v = to_double(s);
                    return std::isfinite(v) ? fmt::format("{:.1f}", 100 * v) : std::string("-");
                  }});
  cols.push_back({"step s", column_of(header, "step_time_s"), +[](const std::string& s) {
                    const double v = to_double(s);
                    return std::isfinite(v) ? fmt::format("{:.3f}", v) : std::string("-");
                  }});
  cols.push_back({"days", column_of(header, "days_to_train"), +[](const std::string& s) {
                    const double v = to_double(s);
                    return std::isfinite(v) && v > 0 ? fmt::format("{:.1f}", v) : std::string("-");
                  }});
  cols.push_back({"GPU-hours", column_of(header, "gpu_hours"), +[](const std::string& s) {
                    const double v = to_double(s);
                    return std::isfinite(v) && v > 0 ? fmt::format("{:.4g}", v) : std::string("-");
                  }});
  cols.push_back({"cost $", column_of(header, "cost_usd"), +[](const std::string& s) {
                    const double v = to_double(s);
                    return std::isfinite(v) && v > 0 ? fmt::format("{:.4g}", v) : std::string("-");
                  }});
  cols.push_back({"mem GiB", column_of(header, "peak_memory_bytes"), +[](const std::string& s) {
                    const double v = to_double(s);
                    return std::isfinite(v) ? fmt::format("{:.1f}", v / (1024.0 * 1024 * 1024)) : std::string("-");
                  }});
  std::vector<std::vector<std::string>> table;
  std::vector<std::string> titles;
  for (const auto& c : cols) titles.push_back(c.title);
  table.push_back(titles);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::vector<std::string> line;
    for (const auto& c : cols) {
      if (!c.at) line.push_back(c.title == "#" ? std::to_string(r + 1) : "-");
      else line.push_back(*c.at < rows[r].size() && !rows[r][*c.at].empty() ? c.show(rows[r][*c.at]) : "-");
    }
    table.push_back(std::move(line));
  }
  std::vector<std::size_t> width(cols.size(), 0);
  for (const auto& line : table)
    for (std::size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  std::string out;
  for (const auto& line : table) {
    out += " ";
    for (std::size_t i = 0; i < line.size(); ++i) out += fmt::format(" {:>{}}", line[i], width[i]);
    out += "\n";
  }
  return out;
}

}  // namespace clustersim::studies
