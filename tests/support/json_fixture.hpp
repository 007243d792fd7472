#pragma once
// Reading the CLI's --json output in tests: the whole document (parse_json_output), or one value
// (the first `"key": value` match, for pretty-printed members).
#include <catch2/catch.hpp>

#include <regex>
#include <string>

#include "studies/json_value.hpp"

namespace clustersim::testing {

/// The JSON document in a command's output: from its first '{' or '[' (a summary line may come
/// first) to the end.
inline studies::Json parse_json_output(const std::string& out) {
  const std::size_t at = out.find_first_of("{[");
  REQUIRE(at != std::string::npos);
  return studies::Json::parse(out.substr(at));
}

/// Whether `rows` (a JSON array of plan rows) has one whose members include every (key, value).
inline bool has_row(const studies::Json& rows, const studies::Json& members) {
  for (const auto& row : rows) {
    bool all = true;
    for (const auto& [k, v] : members.items()) all = all && row.contains(k) && row[k] == v;
    if (all) return true;
  }
  return false;
}

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
