#pragma once
// The held-out split of the published rows, by source and date (data/validation/source_dates.csv,
// data/validation/holdout_split.csv): rows whose source was published on or after their table's
// cut-off month. No fitted constant is fitted on them (calibrate skips them) and `validate` quotes
// their error first. The split is data so that it cannot drift with whatever a change would like
// to be out of sample.
#include <map>
#include <optional>
#include <string>

namespace clustersim::studies {

/// The publication date ("YYYY" or "YYYY-MM") of a row's source: the first line of source_dates.csv
/// whose family is the row's id family and whose source_contains occurs in the row's source column;
/// nullopt when none does (a user's own table). Every shipped row has one (holdout_split_test).
std::optional<std::string> source_published(const std::map<std::string, std::string>& row);

/// The cut-off month of the split that covers `id` (the holdout_split.csv line with the longest
/// id_prefix that starts it).
std::string holdout_from(const std::string& id);

/// Whether the row is in the held-out split: its source is dated and was published in or after
/// holdout_from().
bool in_holdout_split(const std::map<std::string, std::string>& row);

/// What the split of `id`'s table holds, in one line (holdout_split.csv's why: the cut-off and its sources).
std::string holdout_description(const std::string& id);

}  // namespace clustersim::studies
