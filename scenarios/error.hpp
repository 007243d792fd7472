#pragma once
#include <stdexcept>
#include <string>

namespace clustersim::scenarios {

/// A user mistake in a scenario, preset or command line. what() is one line that names the
/// file (and line:column when known), the key path, what was found and what is allowed.
class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A key the scenario contract does not know (YamlReader::allow_only): refused whatever the
/// values around it, so a search can refuse it before it starts.
class UnknownKeyError : public ScenarioError {
 public:
  using ScenarioError::ScenarioError;
};

}  // namespace clustersim::scenarios
