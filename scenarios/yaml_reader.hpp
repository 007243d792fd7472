#pragma once
// Typed, validated access to one YAML mapping, with errors that name the file, line, column
// and key path. The only place besides load.cpp that includes yaml-cpp.
#include <yaml-cpp/yaml.h>

#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/enum_names.hpp"
#include "scenarios/quantity.hpp"

namespace clustersim::scenarios {

/// Key paths a patch set with an origin (scenarios/scenario_patch.hpp) → that origin ("--set").
using Origins = std::map<std::string, std::string>;

/// A patch read through rather than written into a copy of the tree (load_scenario_shared in
/// scenarios/load.cpp): the values it gives one mapping's keys, and the mappings it reaches into.
/// A reader with an overlay answers as if the patch had been applied to its mapping.
struct Overlay {
  struct Section;
  std::vector<std::pair<std::string, YAML::Node>> values;  ///< keys set to a value (null: removed)
  std::vector<Section> sections;                           ///< keys whose mapping the patch sets keys in
  std::vector<std::string> order;                          ///< every key above, in patch order
  const Overlay* section(const std::string& key) const;
};
struct Overlay::Section {
  std::string key;
  Overlay keys;
};

class YamlReader {
 public:
  /// `source_of(key)` names the file a top-level key came from (presets merged with user keys).
  /// `marks`: the same mapping as the user wrote it, whose keys' lines errors cite where `node`
  /// lost them (a sweep's copy of the scenario, a preset merged with inline keys).
  /// `overlay`: a patch this mapping is read through (outlives the reader).
  YamlReader(YAML::Node node, std::string path, std::function<std::string(const std::string&)> source_of,
             const Origins* origins, YAML::Node marks = YAML::Node(), const Overlay* overlay = nullptr);

  /// Rejects keys outside `allowed`, suggesting the nearest allowed one.
  void allow_only(const std::vector<std::string>& allowed) const;
  bool has(const std::string& key) const;
  YamlReader child(const std::string& key) const;  ///< must be a mapping

  int integer(const std::string& key, int fallback, long lo, long hi) const;
  double number(const std::string& key, double fallback, double lo, double hi) const;
  double quantity(const std::string& key, Dimension dim, double fallback, double lo, double hi) const;
  bool boolean(const std::string& key, bool fallback) const;
  std::string text(const std::string& key, const std::string& fallback) const;
  /// One of `choices`; returns its index.
  int choice(const std::string& key, const std::vector<std::string>& choices, int fallback) const;
  /// One of the names of `table` (models/enum_names.hpp); returns its value.
  template <class E, std::size_t N>
  E enum_choice(const std::string& key, const models::NameTable<E, N>& table, E fallback) const {
    int at = 0;
    while (at < int(N) && table[std::size_t(at)].value != fallback) ++at;
    return table[std::size_t(choice(key, models::names_in(table), at))].value;
  }
  std::vector<double> numbers(const std::string& key, std::size_t count, double lo, double hi) const;

  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  [[noreturn]] void fail_at(const YAML::Mark& mark, const std::string& key, const std::string& message) const;
  /// The one-line message fail_at throws: the key's file:line:column (or source) and path.
  std::string located(const YAML::Mark& mark, const std::string& key, const std::string& message) const;
  std::string key_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  /// "file:line:column: key.path" (or "--set key.path"), the prefix fail() writes.
  std::string where(const std::string& key) const;
  /// "--vary model.hidden" when a patch set `key` (or a mapping above it) with an origin.
  std::optional<std::string> patched(const std::string& key) const;
  /// The value at `key` (undefined when absent), overlay included: for the lists and mappings
  /// the typed readers above do not cover.
  YAML::Node raw(const std::string& key) const;
  /// The mapping as parsed, without the overlay: for iterating a mapping no patch reaches.
  const YAML::Node& node() const { return node_; }

 private:
  std::string location(const std::string& key) const;
  bool names_key(const std::optional<std::string>& patched, const std::string& key) const;
  /// The entry at `key` (nullopt: absent); value(): also nullopt when it is null.
  std::optional<YAML::Node> entry(const std::string& key) const;
  YAML::Node overlaid(const std::string& key, const YAML::Node& file_value) const;
  std::optional<YAML::Node> value(const std::string& key) const;
  std::string scalar(const std::string& key, const YAML::Node& n) const;

  YAML::Node node_;
  std::string path_;
  std::function<std::string(const std::string&)> source_of_;
  const Origins* origins_;
  YAML::Node marks_;  ///< read only through const access (which never inserts)
  const Overlay* overlay_ = nullptr;
  mutable std::vector<std::pair<std::string, YAML::Node>> entries_;  ///< the scalar keys, listed on first lookup
  mutable bool indexed_ = false;
};

/// The entry `key` of mapping `map` read without inserting it (an undefined node when absent).
YAML::Node lookup(const YAML::Node& map, const std::string& key);

/// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(const std::string& a, const std::string& b);
/// The nearest of `options` to `word` when it is plausibly a typo, else "".
std::string nearest(const std::string& word, const std::vector<std::string>& options);
std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");

}  // namespace clustersim::scenarios
