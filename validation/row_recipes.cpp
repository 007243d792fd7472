#include "validation/row_recipes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <variant>

#include "scenarios/error.hpp"
#include "validation/conventions.hpp"
#include "validation/data_table.hpp"

namespace clustersim::studies {
namespace {

struct RecipeSetting {
  std::string id;
  scenarios::ScenarioPatch patch;  ///< the one assignment, naming its table line in errors
  std::string assignment, source;
};

const std::vector<RecipeSetting>& settings() {
  static const std::vector<RecipeSetting> table = read_table<RecipeSetting>(
      row_recipes_text(), "data/validation/row_recipes.csv", {"id", "set", "source"},
      [](const auto& r, const std::string& where) {
        if (r.at("source").empty()) throw scenarios::ScenarioError(where + ": source: empty; every setting names where it was read");
        return RecipeSetting{r.at("id"), scenarios::ScenarioPatch::parse({r.at("set")}, where), r.at("set"), r.at("source")};
      });
  return table;
}

}  // namespace

scenarios::ScenarioPatch row_recipe_patch(const std::string& id, std::vector<std::string>* assumptions) {
  scenarios::ScenarioPatch out = scenarios::ScenarioPatch::from("data/validation/row_recipes.csv");
  // A paper's run has no release: its settings are the setup its report describes.
  const char* what = id.rfind("MOE-DSREPORT", 0) == 0 ? "the report's setup" : "the release's recipe";
  for (const auto& s : settings()) {
    if (s.id != id) continue;
    for (const auto& e : s.patch.entries()) out.add(e);
    if (s.source.rfind("not published", 0) == 0)  // the report leaves it out: an assumption, not its setup
      assumptions->push_back(fmt::format("{} ({})", s.assignment, s.source));
    else assumptions->push_back(fmt::format("{}: {} ({})", what, s.assignment, s.source));
  }
  return out;
}

bool row_recipe_sets(const std::string& id, const std::string& path) {
  return std::any_of(settings().begin(), settings().end(),
                     [&](const RecipeSetting& s) { return s.id == id && s.patch.find(path) != nullptr; });
}

std::optional<double> row_recipe_number(const std::string& id, const std::string& path) {
  for (const auto& s : settings()) {
    if (s.id != id) continue;
    if (const scenarios::PatchValue* v = s.patch.find(path)) {
      if (const auto* i = std::get_if<long long>(v)) return double(*i);
      if (const auto* d = std::get_if<double>(v)) return *d;
    }
  }
  return std::nullopt;
}

std::vector<std::string> row_recipe_ids() {
  std::vector<std::string> ids;
  for (const auto& s : settings()) ids.push_back(s.id);
  return ids;
}

}  // namespace clustersim::studies
