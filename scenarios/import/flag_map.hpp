#pragma once
// Command-line flags (`--name value`, `--name=value`, boolean `--name`) collected from shell words,
// with typed accessors whose errors name the source file and the flag.
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

  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::optional<std::string> text(const std::string& name) const;
  std::optional<long long> integer(const std::string& name) const;  ///< throws ScenarioError if not an integer
  std::optional<double> number(const std::string& name) const;      ///< throws ScenarioError if not a number
  /// "--name value" (or "--name") as written, for origin comments.
  std::string origin(const std::string& name) const;
  const std::map<std::string, std::string>& all() const { return values_; }
  const std::string& source() const { return source_; }

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> boolean_;
  std::string source_;
};

}  // namespace clustersim::scenarios::importers
