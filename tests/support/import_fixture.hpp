#pragma once
// Reading importer inputs and results in tests: a file of tests/scenarios/import_inputs/, one
// imported key's value or origin comment, and whether a warning says something.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "scenarios/import/importers.hpp"

namespace clustersim::testing {

inline std::string import_input(const std::string& name) {
  std::ifstream in(std::string(CLUSTERSIM_SOURCE_DIR) + "/tests/scenarios/import_inputs/" + name);
  REQUIRE(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline const scenarios::importers::ImportedKey& imported_key(const scenarios::importers::Imported& i,
                                                             const std::string& path) {
  const scenarios::importers::ImportedKey* k = i.find(path);
  INFO(path);
  REQUIRE(k != nullptr);
  return *k;
}

inline bool import_warned(const scenarios::importers::Imported& i, const std::string& part) {
  for (const auto& w : i.warnings)
    if (w.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace clustersim::testing
