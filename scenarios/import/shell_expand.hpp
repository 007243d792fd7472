#pragma once
// Parameter expansion as bash performs it on the words of a launch script: $V, ${V}, ${V:-default}
// (the default read as a word: quotes removed), ${V:=x}, ${V:+x}, ${A[@]}, ${#A[@]}, $((integer
// arithmetic)); unquoted expansions split on blanks, "${A[@]}" gives one field per element. Command
// substitution $(…) is not run: it expands to nothing and is noted as unresolved.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/import/shell_lexer.hpp"

namespace clustersim::scenarios::importers::shell {

class Expander {
 public:
  Expander(std::map<std::string, std::vector<std::string>>& vars, std::vector<std::string>* unresolved)
      : vars_(vars), unresolved_(unresolved) {}

  /// The fields a word expands to.
  std::vector<std::string> fields(const std::vector<Segment>& segs);
  /// The value of an arithmetic expression (the inside of (( … )) or $(( … ))); nullopt when it is not one.
  std::optional<long long> arithmetic(const std::string& expr);
  /// The fields joined by single spaces (an assignment's value).
  std::string joined(const std::vector<Segment>& segs);

 private:
  struct Expansion {
    std::vector<std::string> values;
    bool elements = false;  ///< ${A[@]}: every element, not one string
  };
  struct Builder;
  void expand_segment(const Segment& seg, Builder& b);
  Expansion dollar(const std::string& t, std::size_t& i);
  Expansion braced(const std::string& inside);
  std::vector<std::string> lookup(const std::string& name);
  std::string bare_names_expanded(const std::string& s);
  void note_unresolved(const std::string& what);

  std::map<std::string, std::vector<std::string>>& vars_;
  std::vector<std::string>* unresolved_;
};

}  // namespace clustersim::scenarios::importers::shell
