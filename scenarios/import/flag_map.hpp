#pragma once
// Command-line flags (`--name value`, `--name=value`, boolean `--name`) collected from shell words,
// or set one by one from another format's fields (set(), with the origin and error prefix of each),
// with typed accessors whose errors name the source file and the flag.
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace clustersim::scenarios::importers {

class FlagMap {
 public:
  /// `boolean` lists flags that never take a value, `multi` those that take every word up to the next
  /// flag (argparse nargs='+' / '*'; kept joined by single spaces). Names are normalized: leading
  /// dashes dropped, '_' read as '-' (torchrun accepts both spellings). The last occurrence wins.
  FlagMap(const std::vector<std::string>& words, const std::set<std::string>& boolean, std::string source,
          const std::set<std::string>& multi = {});

  /// An empty map for flags set one by one (the Megatron-Bridge importer translates a ConfigContainer's
  /// fields to the Megatron-LM flags they stand for, so one mapping serves both).
  explicit FlagMap(std::string source) : source_(std::move(source)) {}
  /// Sets flag `name` to `value` ("" for a boolean flag that is on). origin() says `origin` for it, and
  /// messages about it name `label` (e.g. "job.yaml:12: model.num_layers") instead of "--name".
  void set(const std::string& name, std::string value, std::string origin, std::string label);
  /// Says why a flag is left out (a field set to false, a default of the other format): origin_or()
  /// returns it in place of its Megatron-LM default.
  void explain_absent(const std::string& name, std::string why) { absent_[name] = std::move(why); }

  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::optional<std::string> text(const std::string& name) const;
  std::optional<long long> integer(const std::string& name) const;  ///< throws ScenarioError if not an integer
  std::optional<double> number(const std::string& name) const;      ///< throws ScenarioError if not a number
  /// "--name value" (or "--name") as written, for origin comments; what set() was told for a flag set so.
  std::string origin(const std::string& name) const;
  /// The origins of several flags that gave one key: "--a --b x" as on the command line, joined by "; "
  /// when a flag was translated from a field (whose origin is a sentence).
  std::string origins(std::initializer_list<std::string> names) const;
  /// origin(name) for a flag given; for one left out, explain_absent()'s reason, else `fallback`.
  std::string origin_or(const std::string& name, const std::string& fallback) const;
  /// True for a flag set() translated from another format's field.
  bool translated(const std::string& name) const { return has(name) && origins_.count(name) > 0; }
  /// "--name", or set()'s label: how a warning about the flag names it.
  std::string label(const std::string& name) const;
  /// "SOURCE: --name", or set()'s label: the prefix of an error about the flag's value.
  std::string where(const std::string& name) const;
  const std::map<std::string, std::string>& all() const { return values_; }
  const std::string& source() const { return source_; }

 private:
  std::map<std::string, std::string> values_;
  std::map<std::string, std::string> origins_, labels_, absent_;  // set() and explain_absent()
  std::set<std::string> boolean_;
  std::string source_;
};

}  // namespace clustersim::scenarios::importers
