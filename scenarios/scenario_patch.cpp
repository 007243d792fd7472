#include "scenarios/scenario_patch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "scenarios/error.hpp"

namespace clustersim::scenarios {

namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

// Letters, digits and . _ - +: what the loader reads without the YAML parser.
bool plain_word(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '+';
  });
}

std::optional<long long> whole_number(const std::string& text) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || std::to_string(v) != text) return std::nullopt;
  return v;
}

std::optional<double> real_number(const std::string& text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || fmt::format("{}", v) != text) return std::nullopt;
  return v;
}

// A string as a YAML scalar: bare when the YAML parser reads it back as the same text.
std::string yaml_scalar(const std::string& s) {
  const bool bare = !s.empty() && s.front() != ' ' && s.back() != ' ' && s.front() != '-' &&
                    s.find_first_of(":#{}[],&*!|>'\"%@`\n\\") == std::string::npos;
  if (bare) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string to_text(const PatchScalar& value) {
  return std::visit(Overloaded{[](long long v) { return std::to_string(v); },
                               [](double v) { return fmt::format("{}", v); },
                               [](bool v) { return std::string(v ? "true" : "false"); },
                               [](const std::string& v) { return v; }},
                    value);
}

std::string to_text(const PatchValue& value) {
  return std::visit(Overloaded{[](PatchNull) { return std::string("null"); },
                               [](const PatchList& list) {
                                 std::string out = "[";
                                 for (std::size_t i = 0; i < list.size(); ++i)
                                   out += (i ? ", " : "") + to_text(list[i]);
                                 return out + "]";
                               },
                               [](const PatchYaml& y) { return y.text; },
                               [](const auto& scalar) { return to_text(PatchScalar(scalar)); }},
                    value);
}

PatchValue value_of(const std::string& text) {
  if (text == "null" || text == "Null" || text == "NULL" || text == "~") return PatchNull{};
  if (!plain_word(text)) return PatchYaml{text};
  if (text == "true") return true;
  if (text == "false") return false;
  if (const auto v = whole_number(text)) return *v;
  if (const auto v = real_number(text)) return *v;
  return text;
}

ScenarioPatch& ScenarioPatch::set(const std::string& path, PatchValue value) {
  for (auto& e : entries_)
    if (e.path == path) {
      e.value = std::move(value);
      e.origin = origin_;
      return *this;
    }
  entries_.push_back(PatchEntry{path, std::move(value), origin_});
  return *this;
}

ScenarioPatch& ScenarioPatch::add(PatchEntry entry) {
  entries_.push_back(std::move(entry));
  return *this;
}

ScenarioPatch& ScenarioPatch::append(const ScenarioPatch& other) {
  entries_.insert(entries_.end(), other.entries_.begin(), other.entries_.end());
  return *this;
}

std::vector<std::string> ScenarioPatch::assignments() const {
  std::vector<std::string> out;
  for (const auto& e : entries_) out.push_back(e.path + "=" + to_text(e.value));
  return out;
}

const PatchValue* ScenarioPatch::find(const std::string& path) const {
  // The last entry of a path is the one that applies.
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
    if (it->path == path) return &it->value;
  return nullptr;
}

ScenarioPatch ScenarioPatch::parse(const std::vector<std::string>& assignments, const std::string& origin) {
  ScenarioPatch patch = from(origin);
  for (const auto& a : assignments) {
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ScenarioError(fmt::format("{} {}: expected key.path=value, e.g. training.micro_batch=2", origin, a));
    const std::string path = a.substr(0, eq);
    if (eq + 1 == a.size())
      throw ScenarioError(fmt::format("{} {}: empty value; write {}=VALUE (or {}=null to remove the key)", origin, a, path, path));
    patch.add(PatchEntry{path, value_of(a.substr(eq + 1)), origin});
  }
  return patch;
}

namespace {

// The patch's paths as a tree of mappings, each key where it first appears.
struct YamlTree {
  std::vector<std::pair<std::string, YamlTree>> keys;
  std::optional<PatchValue> value;
  YamlTree& at(const std::string& key) {
    for (auto& [k, t] : keys)
      if (k == key) return t;
    return keys.emplace_back(key, YamlTree{}).second;
  }
  void write(std::string* out, int indent) const {
    for (const auto& [k, t] : keys) {
      *out += std::string(std::size_t(indent), ' ') + k + ":";
      if (t.keys.empty()) {
        *out += " " + (t.value ? text_of(*t.value) : "null") + "\n";
        continue;
      }
      *out += "\n";
      if (t.value) *out += std::string(std::size_t(indent + 2), ' ') + "base: " + text_of(*t.value) + "\n";
      t.write(out, indent + 2);
    }
  }
  static std::string text_of(const PatchValue& v) {
    if (const auto* s = std::get_if<std::string>(&v)) return yaml_scalar(*s);
    if (const auto* list = std::get_if<PatchList>(&v)) {
      std::string out = "[";
      for (std::size_t i = 0; i < list->size(); ++i) {
        const auto* word = std::get_if<std::string>(&(*list)[i]);
        out += (i ? ", " : "") + (word ? yaml_scalar(*word) : to_text((*list)[i]));
      }
      return out + "]";
    }
    return to_text(v);
  }
};

}  // namespace

std::string ScenarioPatch::yaml() const {
  YamlTree root;
  for (const auto& e : entries_) {
    YamlTree* node = &root;
    for (std::size_t from = 0; from <= e.path.size();) {
      const std::size_t dot = std::min(e.path.find('.', from), e.path.size());
      node = &node->at(e.path.substr(from, dot - from));
      from = dot + 1;
    }
    node->value = e.value;
  }
  std::string out;
  root.write(&out, 0);
  return out;
}

}  // namespace clustersim::scenarios
