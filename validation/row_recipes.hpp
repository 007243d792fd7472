#pragma once
// The settings of a published row's own release recipe where they differ from what its family's
// conventions and the row's columns give (data/validation/row_recipes.csv, each read from the
// stack's repository at the tag of the row's container). Facts about how the run was launched,
// one line per setting with its source; never tuned on a row's error. A setting the source does
// not publish (a paper's cluster size) says so in its source, which starts "not published", and is
// labelled an assumption, not the run's setup.
#include <optional>
#include <string>
#include <vector>

#include "scenarios/scenario_patch.hpp"

namespace clustersim::studies {

/// The recipe settings of row `id` as a patch applied after every convention; each setting adds
/// one line to `assumptions` naming its source. Empty when the table has no line for `id`.
scenarios::ScenarioPatch row_recipe_patch(const std::string& id, std::vector<std::string>* assumptions);

/// Whether the table sets `path` (a scenario key, e.g. "model.mtp_layers") for row `id`: the
/// conventions then say nothing of their own for it.
bool row_recipe_sets(const std::string& id, const std::string& path);

/// The number the table sets `path` to for row `id` (e.g. "cluster.gpus"); empty when it sets none.
std::optional<double> row_recipe_number(const std::string& id, const std::string& path);

/// The ids the table names, in its order (a test checks each names a published row).
std::vector<std::string> row_recipe_ids();

}  // namespace clustersim::studies
