// The Megatron-Bridge reader's value helpers (megatron_bridge_reader.hpp).
#include "scenarios/import/megatron_bridge_reader.hpp"

#include <cctype>
#include <cstdlib>

namespace clustersim::scenarios::importers::mbridge {

// The value as a user reads it: a scalar as written, a list in flow style, a `_target_`/`_name_`
// mapping (a function, dtype or enum of to_yaml) by its name.
std::string shown(const YAML::Node& n) {
  if (!n || n.IsNull()) return "null";
  if (n.IsScalar()) return n.Scalar();
  if (n.IsSequence()) {
    std::string s = "[";
    for (std::size_t i = 0; i < n.size(); ++i) s += (i ? ", " : "") + shown(n[i]);
    return s + "]";
  }
  if (n["_name_"] && n["_name_"].IsScalar()) return n["_name_"].Scalar();
  if (n["_target_"] && n["_target_"].IsScalar()) {
    const std::string t = n["_target_"].Scalar();
    return t.substr(t.rfind('.') + 1);
  }
  std::string s;
  for (const auto& kv : n) s += (s.empty() ? "{" : ", ") + shown(kv.first) + ": " + shown(kv.second);
  return s.empty() ? "{}" : s.size() > 60 ? "{…}" : s + "}";
}

// shown() with YAML's spellings of true, false and null made one (True, yes, None, ~ …), for comparing
// a value with its default.
std::string normalized_text(const YAML::Node& n) {
  if (!n || n.IsNull()) return "null";
  if (n.IsSequence()) {
    std::string s = "[";
    for (std::size_t i = 0; i < n.size(); ++i) s += (i ? ", " : "") + normalized_text(n[i]);
    return s + "]";
  }
  std::string v = shown(n);
  std::string lower = v;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (lower == "true" || lower == "yes" || lower == "on") return "true";
  if (lower == "false" || lower == "no" || lower == "off") return "false";
  if (lower == "null" || lower == "none" || lower == "~" || lower.empty()) return "null";
  return v;
}

bool same_value(const std::string& a, const std::string& b) {
  if (a == b) return true;
  char *ea = nullptr, *eb = nullptr;
  const double x = std::strtod(a.c_str(), &ea), y = std::strtod(b.c_str(), &eb);
  return !a.empty() && !b.empty() && *ea == '\0' && *eb == '\0' && x == y;
}

const char* node_kind(const YAML::Node& n) {
  return n.IsSequence() ? "a list" : n.IsMap() ? "a mapping" : n.IsNull() ? "nothing" : "a scalar";
}

std::string section_of(const std::string& path) { return path.substr(0, path.find('.')); }

}  // namespace clustersim::scenarios::importers::mbridge
