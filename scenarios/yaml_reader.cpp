#include "scenarios/yaml_reader.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "scenarios/error.hpp"

namespace clustersim::scenarios {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    prev.swap(cur);
  }
  return prev[b.size()];
}

std::string nearest(const std::string& word, const std::vector<std::string>& options) {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& o : options) {
    const std::size_t d = edit_distance(word, o);
    if (d < best_d) best_d = d, best = o;
  }
  return best;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

// `patched` ("--set a.b") names exactly the key path of `key`.
bool YamlReader::names_key(const std::optional<std::string>& patched, const std::string& key) const {
  const std::string full = key_path(key);
  return patched && patched->size() > full.size() && patched->compare(patched->size() - full.size(), full.size(), full) == 0 &&
         (*patched)[patched->size() - full.size() - 1] == ' ';
}

YamlReader::YamlReader(YAML::Node node, std::string path, std::function<std::string(const std::string&)> source_of,
                       const Origins* origins, YAML::Node marks, const Overlay* overlay)
    : node_(std::move(node)),
      path_(std::move(path)),
      source_of_(std::move(source_of)),
      origins_(origins),
      marks_(std::move(marks)),
      overlay_(overlay) {}

const Overlay* Overlay::section(const std::string& key) const {
  for (const auto& s : sections)
    if (s.key == key) return &s.keys;
  return nullptr;
}

// The first entry whose key is the scalar `key`, found by comparing strings (yaml-cpp's const
// operator[] finds the same entry through a temporary node per entry passed).
YAML::Node lookup(const YAML::Node& map, const std::string& key) {
  if (map && map.IsMap())
    for (const auto& kv : map)
      if (kv.first.IsScalar() && kv.first.Scalar() == key && kv.second) return kv.second;
  return YAML::Node(YAML::NodeType::Undefined);
}

std::optional<std::string> YamlReader::patched(const std::string& key) const {
  const std::string full = key_path(key);
  if (origins_)
    for (const auto& [path, origin] : *origins_)
      if (full == path || full.rfind(path + ".", 0) == 0) return origin + " " + path;
  return std::nullopt;
}

std::string YamlReader::location(const std::string& key) const {
  if (auto p = patched(key)) return *p;
  std::string file = source_of_(key);
  YAML::Mark mark = YAML::Mark::null_mark();
  const YAML::Node written = key.empty() ? YAML::Node(YAML::NodeType::Undefined) : lookup(marks_, key);
  if (written) mark = written.Mark();
  else if (node_.IsMap() && !key.empty() && node_[key]) mark = node_[key].Mark();
  else if (node_) mark = node_.Mark();
  // A copied node (YAML::Clone) has every mark at 1:1; a key's value is never there, so that is
  // no line at all: name the file alone rather than a wrong line.
  const bool copied = !key.empty() && !written && mark.line == 0 && mark.column == 0;
  if (mark.line >= 0 && !mark.is_null() && !copied) file += fmt::format(":{}:{}", mark.line + 1, mark.column + 1);
  return file;
}

std::string YamlReader::located(const YAML::Mark& mark, const std::string& key, const std::string& message) const {
  std::string where = location(key);
  const auto p = patched(key);
  // A node built by merging a model or hardware over its preset carries a zero mark (position 0,
  // which no entry of a scenario mapping can hold): the key's own location is given instead.
  if (!mark.is_null() && mark.pos > 0 && !p) {
    where = source_of_(key) + fmt::format(":{}:{}", mark.line + 1, mark.column + 1);
  }
  if (!key.empty() && names_key(p, key)) return fmt::format("{}: {}", where, message);
  return fmt::format("{}: {}: {}", where, key.empty() ? (path_.empty() ? "(top level)" : path_) : key_path(key),
                     message);
}

void YamlReader::fail_at(const YAML::Mark& mark, const std::string& key, const std::string& message) const {
  throw ScenarioError(located(mark, key, message));
}

std::string YamlReader::where(const std::string& key) const {
  const std::string w = location(key);
  return names_key(patched(key), key) ? w : w + ": " + key_path(key);
}

void YamlReader::fail(const std::string& key, const std::string& message) const {
  const std::string where = location(key);
  // "--set training.seq_len" already names the key; a file location needs the key path after it.
  if (names_key(patched(key), key)) throw ScenarioError(fmt::format("{}: {}", where, message));
  throw ScenarioError(fmt::format("{}: {}: {}", where, key_path(key), message));
}

void YamlReader::allow_only(const std::vector<std::string>& allowed) const {
  if (!node_.IsMap()) fail("", "expected a mapping of keys");
  for (const auto& kv : node_) {
    const YAML::Mark at = kv.first.Mark();
    if (!kv.first.IsScalar())
      fail_at(at, "", fmt::format("keys must be plain names; allowed: {}", join(allowed)));
    const std::string k = kv.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
    const std::string near = nearest(k, allowed);
    throw UnknownKeyError(located(at, k,
                                  near.empty() ? fmt::format("unknown key '{}'; allowed: {}", k, join(allowed))
                                               : fmt::format("unknown key '{}' — did you mean '{}'?", k, near)));
  }
  if (!overlay_) return;
  // The keys the patch adds, after the file's, as applying it would have appended them.
  for (const std::string& k : overlay_->order) {
    if (std::find(allowed.begin(), allowed.end(), k) != allowed.end() || lookup(node_, k)) continue;
    const std::string near = nearest(k, allowed);
    throw UnknownKeyError(located(YAML::Mark::null_mark(), k,
                                  near.empty() ? fmt::format("unknown key '{}'; allowed: {}", k, join(allowed))
                                               : fmt::format("unknown key '{}' — did you mean '{}'?", k, near)));
  }
}

// The value `key` has through the overlay: the patch's, an empty mapping where the patch sets
// keys in a mapping the file lacks (or holds null), else the file's. Entries are only ever
// constructed, never assigned: assigning a YAML::Node rebinds the tree node it refers to, and the
// tree is shared (load_scenario_shared).
YAML::Node YamlReader::overlaid(const std::string& key, const YAML::Node& file_value) const {
  if (!overlay_) return file_value;
  for (const auto& [k, v] : overlay_->values)
    if (k == key) return v;
  if (overlay_->section(key) && file_value.IsNull()) return YAML::Node(YAML::NodeType::Map);
  return file_value;
}

// yaml-cpp's const operator[] turns `key` into a temporary node and compares every entry's key
// through a conversion, with allocations per entry; sweeps read tens of keys per configuration.
// The reader lists the mapping's scalar keys once and compares strings: it finds the same entry,
// the first whose key is the scalar `key` (a list or mapping key never equals a string;
// iteration, like operator[], passes over entries without a defined value). Readers only read,
// so the mapping does not change under the list.
std::optional<YAML::Node> YamlReader::entry(const std::string& key) const {
  if (!node_.IsMap()) return std::nullopt;
  if (!indexed_) {
    for (const auto& kv : node_)
      if (kv.first.IsScalar()) entries_.emplace_back(kv.first.Scalar(), overlaid(kv.first.Scalar(), kv.second));
    indexed_ = true;
    if (overlay_) {  // the keys the patch adds, in its order
      const std::size_t in_file = entries_.size();
      for (const std::string& k : overlay_->order)
        if (std::none_of(entries_.begin(), entries_.begin() + std::ptrdiff_t(in_file),
                         [&](const auto& e) { return e.first == k; }))
          entries_.emplace_back(k, overlaid(k, YAML::Node(YAML::NodeType::Null)));
    }
  }
  for (const auto& [k, v] : entries_)
    if (k == key) return v;
  return std::nullopt;
}

std::optional<YAML::Node> YamlReader::value(const std::string& key) const {
  auto n = entry(key);
  if (n && n->IsNull()) return std::nullopt;
  return n;
}

bool YamlReader::has(const std::string& key) const { return value(key).has_value(); }

YAML::Node YamlReader::raw(const std::string& key) const {
  auto n = entry(key);
  return n ? *n : YAML::Node(YAML::NodeType::Undefined);
}

YamlReader YamlReader::child(const std::string& key) const {
  const auto n = value(key);
  const Overlay* section = overlay_ ? overlay_->section(key) : nullptr;
  if (!n)
    return YamlReader(YAML::Node(YAML::NodeType::Map), key_path(key), source_of_, origins_, YAML::Node(), section);
  if (!n->IsMap()) fail(key, "expected a mapping of keys");
  auto parent_source = source_of_;
  return YamlReader(
      *n, key_path(key), [parent_source, key](const std::string&) { return parent_source(key); }, origins_,
      lookup(marks_, key), section);
}

std::string YamlReader::scalar(const std::string& key, const YAML::Node& n) const {
  if (!n.IsScalar()) fail(key, "expected a single value, found a list or mapping");
  return n.Scalar();
}

int YamlReader::integer(const std::string& key, int fallback, long lo, long hi) const {
  const auto n = value(key);
  if (!n) return fallback;
  const std::string s = scalar(key, *n);
  std::string why;
  auto v = parse_quantity(s, Dimension::count, &why);
  if (!v) fail(key, fmt::format("'{}' is not an integer", s));
  if (*v != std::floor(*v)) fail(key, fmt::format("'{}' is not a whole number", s));
  if (*v < double(lo) || *v > double(hi))
    fail(key, fmt::format("{} is out of range; allowed {}..{}", s, lo, hi));
  return static_cast<int>(*v);
}

double YamlReader::number(const std::string& key, double fallback, double lo, double hi) const {
  return quantity(key, Dimension::count, fallback, lo, hi);
}

double YamlReader::quantity(const std::string& key, Dimension dim, double fallback, double lo,
                            double hi) const {
  const auto n = value(key);
  if (!n) return fallback;
  const std::string s = scalar(key, *n);
  std::string why;
  auto v = parse_quantity(s, dim, &why);
  if (!v) fail(key, why);
  if (!(*v >= lo && *v <= hi))
    fail(key, fmt::format("{} is out of range; allowed {:g}..{:g} (SI units)", s, lo, hi));
  return *v;
}

bool YamlReader::boolean(const std::string& key, bool fallback) const {
  const auto n = value(key);
  if (!n) return fallback;
  const std::string s = scalar(key, *n);
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  fail(key, fmt::format("'{}' is not a boolean; allowed: true, false", s));
}

std::string YamlReader::text(const std::string& key, const std::string& fallback) const {
  const auto n = value(key);
  return n ? scalar(key, *n) : fallback;
}

int YamlReader::choice(const std::string& key, const std::vector<std::string>& choices, int fallback) const {
  const auto n = value(key);
  if (!n) return fallback;
  const std::string s = scalar(key, *n);
  for (std::size_t i = 0; i < choices.size(); ++i)
    if (choices[i] == s) return int(i);
  const std::string near = nearest(s, choices);
  fail(key, fmt::format("'{}' is not allowed{}; allowed: {}", s,
                        near.empty() ? "" : " (did you mean '" + near + "'?)", join(choices)));
}

std::vector<double> YamlReader::numbers(const std::string& key, std::size_t count, double lo, double hi) const {
  const YAML::Node n = raw(key);
  if (!n.IsSequence() || n.size() != count) fail(key, fmt::format("expected a list of {} numbers", count));
  std::vector<double> out;
  for (const auto& item : n) {
    std::string why;
    auto v = parse_quantity(item.Scalar(), Dimension::count, &why);
    if (!v || *v < lo || *v > hi) fail(key, fmt::format("'{}' is not a number in {:g}..{:g}", item.Scalar(), lo, hi));
    out.push_back(*v);
  }
  return out;
}

}  // namespace clustersim::scenarios
