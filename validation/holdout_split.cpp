#include "validation/holdout_split.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "scenarios/error.hpp"
#include "validation/conventions.hpp"
#include "validation/data_table.hpp"
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

const std::string& checked_date(const std::string& d, const std::string& where, const char* key) {
  if (!valid_date(d)) throw scenarios::ScenarioError(fmt::format("{}: {}: '{}' is not YYYY or YYYY-MM", where, key, d));
  return d;
}

const std::vector<SourceDate>& source_dates() {
  static const std::vector<SourceDate> table = read_table<SourceDate>(
      source_dates_text(), "data/validation/source_dates.csv", {"family", "source_contains", "published"},
      [](const auto& r, const std::string& where) {
        return SourceDate{r.at("family"), r.at("source_contains"), checked_date(r.at("published"), where, "published")};
      });
  return table;
}

const std::vector<Cutoff>& cutoffs() {
  static const std::vector<Cutoff> table = read_table<Cutoff>(
      holdout_split_text(), "data/validation/holdout_split.csv", {"id_prefix", "held_out_from", "why"},
      [](const auto& r, const std::string& where) {
        return Cutoff{r.at("id_prefix"), checked_date(r.at("held_out_from"), where, "held_out_from"), r.at("why")};
      });
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
  const auto id_it = row.find("id");
  if (id_it == row.end()) return std::nullopt;
  const std::string family = family_of(id_it->second);
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
  return published && *published >= holdout_from(row.at("id"));
}

std::string holdout_description(const std::string& id) {
  return cutoff_of(id).why;
}

}  // namespace clustersim::studies
