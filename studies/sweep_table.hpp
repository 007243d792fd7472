#pragma once
// Sweep results as tables: the CSV/JSON-lines encodings of a result row, the metric columns
// (every number of `run --json`, flattened), and the top-k ranking shared by sweep, merge
// and plan.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "studies/json_text.hpp"
#include <utility>
#include <vector>

namespace clustersim::studies {

/// Flattens a JSON object as written by metrics_json (the rows of a JSON-lines file being merged) into (dotted key, value) pairs; strings
/// are unquoted, numbers/booleans/null kept as written, arrays kept as compact JSON text. Throws std::runtime_error if malformed.
std::vector<std::pair<std::string, std::string>> flatten_json(const std::string& json);
/// The same JSON without insignificant whitespace (one line).
std::string compact_json(const std::string& json);

/// A cell as a JSON value: null when empty, a number when it reads as one, else a string.
std::string json_scalar(const std::string& cell);

std::string csv_line(const std::vector<std::string>& cells);
/// Splits one CSV line (RFC 4180 quoting, the one reader of hardware/csv.hpp; no line breaks inside
/// fields). Throws hardware::CsvError when a quote is left open.
std::vector<std::string> parse_csv_line(const std::string& line);

enum class RankBy { mfu, step_time, days, cost };
RankBy parse_rank_by(const std::string& text);  ///< throws ScenarioError
const char* name(RankBy by);

/// Rows are ranked by a header-named column: mfu (highest first), step_time_s, days_to_train
/// or gpu_hours (lowest first; cost ranks by GPU-hours, which orders plans as cost does at
/// one price). Only rows with status "ok" and a positive finite value take part; ties go to
/// the lower index, so the ranking is deterministic.
class TopK {
 public:
  TopK(const std::vector<std::string>& header, RankBy by, std::size_t k);
  void offer(std::uint64_t index, const std::vector<std::string>& cells);
  /// Ranked rows, best first.
  std::vector<std::vector<std::string>> rows() const;
  std::size_t considered() const { return considered_; }

 private:
  struct Entry {
    double order_key;  // lower is better
    std::uint64_t index;
    std::vector<std::string> cells;
    bool operator<(const Entry& o) const { return order_key != o.order_key ? order_key < o.order_key : index < o.index; }
  };
  std::size_t status_col_, key_col_;
  bool descending_;
  std::size_t k_;
  std::set<Entry> best_;
  std::size_t considered_ = 0;
};

/// A terminal table of ranked rows: the varied columns (`config_columns`) then MFU, step time,
/// days, GPU-hours, cost and memory.
std::string format_top_table(const std::vector<std::string>& header, const std::vector<std::string>& config_columns,
                             const std::vector<std::vector<std::string>>& rows);

/// Counts why configurations were rejected. Reasons that differ only in their numbers count as
/// one ("needs 81.2 GiB" and "needs 93.0 GiB"), shown by the first example seen.
class ReasonTally {
 public:
  void add(const std::string& reason);
  /// (count, example), most frequent first; ties in first-seen order.
  std::vector<std::pair<std::uint64_t, std::string>> most_common(std::size_t n) const;

 private:
  struct Entry {
    std::uint64_t count = 0;
    std::uint64_t first_seen = 0;
    std::string example;
  };
  std::map<std::string, Entry> by_shape_;
  std::uint64_t seen_ = 0;
};

std::optional<std::size_t> column_of(const std::vector<std::string>& header, const std::string& name);

}  // namespace clustersim::studies
