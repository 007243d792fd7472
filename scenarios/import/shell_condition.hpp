#pragma once
// The conditions of `if`/`elif` in a launch script, evaluated from the variables the script has set:
// [[ … ]], [ … ] and test with = == != (glob patterns in [[ ]]), -z -n, -eq -ne -lt -le -gt -ge,
// ! && || -a -o, joined into lists by && and ||. What cannot be known without running the script (file
// tests, =~, other commands) is unknown, with the reason.
#include <optional>
#include <string>
#include <vector>

namespace clustersim::scenarios::importers::shell {

struct Truth {
  std::optional<bool> value;  ///< nullopt: cannot be decided here
  std::string why;            ///< for an unknown value: what could not be evaluated
};

/// `items` are the expanded fields of the condition, with "&&" and "||" between commands kept as items.
Truth evaluate_condition(const std::vector<std::string>& items);

}  // namespace clustersim::scenarios::importers::shell
