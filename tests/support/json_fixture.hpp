#pragma once
// Reading one value out of the CLI's --json output in tests (the first `"key": value` match).
#include <catch2/catch.hpp>

#include <regex>
#include <string>

namespace clustersim::testing {

inline double json_number(const std::string& json, const std::string& key) {
  std::smatch m;
  const std::regex re("\"" + key + "\": (-?[0-9.eE+-]+)");
  REQUIRE(std::regex_search(json, m, re));
  return std::stod(m[1]);
}

inline std::string json_text(const std::string& json, const std::string& key) {
  std::smatch m;
  const std::regex re("\"" + key + "\": \"([^\"]*)\"");
  REQUIRE(std::regex_search(json, m, re));
  return m[1];
}

}  // namespace clustersim::testing
