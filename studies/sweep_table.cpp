#include "studies/sweep_table.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "hardware/csv.hpp"
#include "scenarios/error.hpp"
#include "scenarios/simulate.hpp"
#include "units/units.hpp"

namespace clustersim::studies {
namespace {

// Flattens a JSON object while nlohmann-json parses it (SAX events): nested objects become dotted
// keys, every scalar keeps its text (a float exactly as written, a string unescaped), an array stays
// one value, its compact JSON text (a CSV cell holds e.g. memory per pipeline stage).
class JsonFlattener : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::vector<std::pair<std::string, std::string>> out;

  bool null() override { return scalar("null", "null"); }
  bool boolean(bool v) override { return scalar(v ? "true" : "false", v ? "true" : "false"); }
  bool number_integer(number_integer_t v) override { return scalar(std::to_string(v), std::to_string(v)); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(std::to_string(v), std::to_string(v)); }
  bool number_float(number_float_t, const string_t& text) override { return scalar(text, text); }
  bool string(string_t& v) override { return scalar(quoted(v), v); }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override {
    if (depth_ == 0 && prefixes_.empty() && seen_root_) throw std::runtime_error("report JSON: trailing text");
    seen_root_ = true;
    if (depth_ > 0) return open('{');
    if (prefixes_.empty()) prefixes_.push_back("");
    else prefixes_.push_back(prefixes_.back() + key_ + ".");
    return true;
  }
  bool key(string_t& k) override {
    if (depth_ == 0) return key_ = k, true;
    separate();
    text_ += quoted(k) + ':';
    after_key_ = true;
    return true;
  }
  bool end_object() override {
    if (depth_ > 0) return close('}');
    prefixes_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    if (prefixes_.empty()) throw std::runtime_error("report JSON at offset 0: expected '{'");
    if (depth_ == 0) text_.clear();
    return open('[');
  }
  bool end_array() override {
    close(']');
    if (depth_ == 0) out.emplace_back(prefixes_.back() + key_, text_);
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    throw std::runtime_error(fmt::format("report JSON at offset {}: {}", position, e.what()));
  }

 private:
  static std::string quoted(const std::string& s) {
    return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  bool scalar(const std::string& json_text, const std::string& value) {
    if (prefixes_.empty()) throw std::runtime_error("report JSON at offset 0: expected '{'");
    if (depth_ == 0) return out.emplace_back(prefixes_.back() + key_, value), true;
    separate();
    text_ += json_text;
    return true;
  }
  // A comma before every element of an array or member of an object inside one, but the first.
  void separate() {
    if (after_key_) return void(after_key_ = false);
    if (!first_.empty() && !first_.back()) text_ += ',';
    if (!first_.empty()) first_.back() = false;
  }
  bool open(char c) {
    if (depth_ > 0) separate();
    text_ += c;
    first_.push_back(true);
    ++depth_;
    return true;
  }
  bool close(char c) {
    text_ += c;
    first_.pop_back();
    --depth_;
    return true;
  }

  std::vector<std::string> prefixes_;  ///< the dotted prefix of each open object outside arrays
  std::string key_;                    ///< the last key read outside arrays
  std::string text_;                   ///< the compact text of the array being read
  std::vector<bool> first_;            ///< per open container inside the array: no element yet
  int depth_ = 0;                      ///< open containers inside the array being read
  bool after_key_ = false, seen_root_ = false;
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
  JsonFlattener f;
  nlohmann::json::sax_parse(json, &f);
  return std::move(f.out);
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
  auto records = hardware::parse_csv_records(line, "CSV line");
  return records.empty() ? std::vector<std::string>(1) : std::move(records.front());
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

double RowFigures::rank_value(RankBy by) const {
  switch (by) {
    case RankBy::mfu: return mfu;
    case RankBy::step_time: return step_time_s;
    case RankBy::days: return days_to_train;
    case RankBy::cost: break;
  }
  return gpu_hours;
}

namespace {
std::size_t rank_column(const std::vector<std::string>& header, const char* key) {
  const auto c = column_of(header, key);
  if (!c) throw scenarios::ScenarioError(fmt::format("the table has no '{}' column to rank by", key));
  return *c;
}
}  // namespace

FigureColumns::FigureColumns(const std::vector<std::string>& header)
    : width_(header.size()), status_(rank_column(header, "status")), mfu_(rank_column(header, "mfu")),
      step_(rank_column(header, "step_time_s")), days_(rank_column(header, "days_to_train")),
      hours_(rank_column(header, "gpu_hours")), memory_(column_of(header, "peak_memory_bytes")) {}

std::optional<RowFigures> FigureColumns::read(const std::vector<std::string>& cells) const {
  if (cells.size() != width_ || cells[status_] != "ok") return std::nullopt;
  return RowFigures{to_double(cells[mfu_]), to_double(cells[step_]), to_double(cells[days_]), to_double(cells[hours_]),
                    memory_ ? to_double(cells[*memory_]) : 0.0};
}

void TopK::offer(std::uint64_t index, const std::optional<RowFigures>& figures, const std::vector<std::string>& cells) {
  if (k_ == 0 || !figures) return;
  const double v = figures->rank_value(by_);
  if (!std::isfinite(v) || v <= 0) return;
  ++considered_;
  const double order_key = by_ == RankBy::mfu ? -v : v;
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
                    return std::isfinite(v) ? fmt::format("{:.1f}", v / units::kBytesPerGiB) : std::string("-");
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
