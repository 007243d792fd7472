#include "validation/holdout_split.hpp"

#include <fmt/format.h>

#include <vector>

#include "scenarios/error.hpp"
#include "studies/csv_table.hpp"
#include "validation/conventions.hpp"
#include "validation/validation.hpp"

namespace clustersim::studies {
namespace {

struct SourceDate {
  std::string family, source_contains, published;
};
struct Cutoff {
  std::string id_prefix, from, why;
};

// "YYYY" or "YYYY-MM": compared as text, a year alone sorts before every month of that year.
bool valid_date(const std::string& d) {
  auto digits = [&](std::size_t at, std::size_t n) {
    for (std::size_t i = at; i < at + n; ++i)
      if (i >= d.size() || d[i] < '0' || d[i] > '9') return false;
    return true;
  };
  if (d.size() == 4) return digits(0, 4);
  return d.size() == 7 && digits(0, 4) && d[4] == '-' && digits(5, 2) && d.substr(5) >= "01" && d.substr(5) <= "12";
}

std::string required(const std::map<std::string, std::string>& r, const char* col, const std::string& where) {
  const auto it = r.find(col);
  if (it == r.end()) throw scenarios::ScenarioError(fmt::format("{}: missing column '{}'", where, col));
  return it->second;
}

const std::vector<SourceDate>& source_dates() {
  static const std::vector<SourceDate> table = [] {
    const std::string name = "data/validation/source_dates.csv";
    const CsvTable t = parse_csv(source_dates_text(), name);
    std::vector<SourceDate> out;
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      const std::string where = fmt::format("{}:{}", name, i + 2);
      SourceDate d{required(t.rows[i], "family", where), required(t.rows[i], "source_contains", where),
                   required(t.rows[i], "published", where)};
      if (!valid_date(d.published))
        throw scenarios::ScenarioError(fmt::format("{}: published: '{}' is not YYYY or YYYY-MM", where, d.published));
      out.push_back(std::move(d));
    }
    return out;
  }();
  return table;
}

const std::vector<Cutoff>& cutoffs() {
  static const std::vector<Cutoff> table = [] {
    const std::string name = "data/validation/holdout_split.csv";
    const CsvTable t = parse_csv(holdout_split_text(), name);
    std::vector<Cutoff> out;
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      const std::string where = fmt::format("{}:{}", name, i + 2);
      Cutoff c{required(t.rows[i], "id_prefix", where), required(t.rows[i], "held_out_from", where),
               required(t.rows[i], "why", where)};
      if (!valid_date(c.from))
        throw scenarios::ScenarioError(fmt::format("{}: held_out_from: '{}' is not YYYY or YYYY-MM", where, c.from));
      out.push_back(std::move(c));
    }
    return out;
  }();
  return table;
}

const Cutoff& cutoff_of(const std::string& id) {
  const Cutoff* best = nullptr;
  for (const auto& c : cutoffs())
    if (id.rfind(c.id_prefix, 0) == 0 && (!best || c.id_prefix.size() > best->id_prefix.size())) best = &c;
  if (!best) throw scenarios::ScenarioError(fmt::format("data/validation/holdout_split.csv: no line covers row {}", id));
  return *best;
}

}  // namespace

std::optional<std::string> source_published(const std::map<std::string, std::string>& row) {
  const std::string id = required(row, "id", "published row");
  const std::string family = family_of(id);
  const auto source_it = row.find("source");
  if (source_it == row.end()) return std::nullopt;
  const std::string& source = source_it->second;
  for (const auto& d : source_dates())
    if (d.family == family && source.find(d.source_contains) != std::string::npos) return d.published;
  return std::nullopt;
}

std::string holdout_from(const std::string& id) { return cutoff_of(id).from; }

bool in_holdout_split(const std::map<std::string, std::string>& row) {
  const auto published = source_published(row);
  return published && *published >= holdout_from(required(row, "id", "published row"));
}

std::string holdout_description(const std::string& id) {
  return cutoff_of(id).why;
}

}  // namespace clustersim::studies
