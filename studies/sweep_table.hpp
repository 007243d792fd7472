#pragma once
// Sweep results as tables: the CSV/JSON-lines encodings of a result row, the metric columns
// (every number of `run --json`, flattened), and the top-k ranking shared by sweep, merge
// and plan.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace clustersim::studies {

/// Flattens a JSON object as written by metrics_json (the rows of a JSON-lines file being merged) into (dotted key, value) pairs; strings
/// are unquoted, numbers/booleans/null kept as written, arrays kept as compact JSON text. Throws std::runtime_error if malformed.
std::vector<std::pair<std::string, std::string>> flatten_json(const std::string& json);
std::string csv_line(const std::vector<std::string>& cells);
/// Splits one CSV line (RFC 4180 quoting, the one reader of hardware/csv.hpp; no line breaks inside
/// fields). Throws hardware::CsvError when a quote is left open.
std::vector<std::string> parse_csv_line(const std::string& line);

enum class RankBy { mfu, step_time, days, cost };
RankBy parse_rank_by(const std::string& text);  ///< throws ScenarioError
const char* name(RankBy by);

/// The figures a sweep row is ranked and planned by, typed: set from the simulated report
/// (Row::figures), so ranking, bounds and plans never read them back from text.
struct RowFigures {
  double mfu = 0;
  double step_time_s = 0;
  double days_to_train = 0;
  double gpu_hours = 0;  ///< days_to_train · 24 · GPUs
  double peak_memory_bytes = 0;
  /// The figure `by` orders on: mfu, step_time_s, days_to_train, or gpu_hours for cost (cost
  /// orders plans as GPU-hours do at one price).
  double rank_value(RankBy by) const;
};

/// The rows of a file written by `sweep --csv` / `--jsonl` read back as figures (`merge`: the one
/// place a sweep's figures come from text). The columns are found once, from the header.
class FigureColumns {
 public:
  /// Throws ScenarioError when `header` lacks a status or figure column.
  explicit FigureColumns(const std::vector<std::string>& header);
  /// nullopt unless the row's status is "ok".
  std::optional<RowFigures> read(const std::vector<std::string>& cells) const;

 private:
  std::size_t width_, status_, mfu_, step_, days_, hours_;
  std::optional<std::size_t> memory_;
};

/// The best k rows by RankBy: mfu highest first, the others lowest first. Only rows with figures
/// (status ok) and a positive finite value take part; ties go to the lower index, so the ranking
/// is deterministic.
class TopK {
 public:
  TopK(RankBy by, std::size_t k) : by_(by), k_(k) {}
  /// `cells` are kept, as written, for the rows that rank.
  void offer(std::uint64_t index, const std::optional<RowFigures>& figures, const std::vector<std::string>& cells);
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
  RankBy by_;
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
