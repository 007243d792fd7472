#pragma once
// Reads the command-line words of a launch script (bash) or an argument file the way the shell would
// hand them to the program: line continuations, quotes, comments, variable assignments and
// expansions ($V, ${V}, ${V:-"default"}, ${A[@]}, $((integer arithmetic))), bash arrays (an unquoted
// ${A[@]} splits each element, so "--fp8-format hybrid" in an array gives two words), and if/elif/else
// branches chosen by the variables the script sets ([[ ]], [ ], test and arithmetic (( ))). It does not run anything: commands other than
// assignments contribute their words, in order.
#include <map>
#include <string>
#include <vector>

namespace clustersim::scenarios::importers {

struct ShellWords {
  std::vector<std::string> words;                       ///< every word of every non-assignment command
  std::map<std::string, std::vector<std::string>> vars;  ///< final value of each assigned variable
  /// Conditions that could not be evaluated without running the script (a file test, a command), where
  /// the branch skipped for them held flags or assignments: "line N: …".
  std::vector<std::string> notes;
};

/// `env` seeds the variables (e.g. WORLD_SIZE given on the command line). Unknown variables expand to
/// nothing, as in bash; their names are collected in `unresolved` when it is not null.
ShellWords read_shell_words(const std::string& text, const std::map<std::string, std::string>& env = {},
                            std::vector<std::string>* unresolved = nullptr);

}  // namespace clustersim::scenarios::importers
