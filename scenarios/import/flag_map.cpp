#include "scenarios/import/flag_map.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "scenarios/error.hpp"

namespace clustersim::scenarios::importers {
namespace {

std::string normalize(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

bool is_flag(const std::string& w) { return w.size() > 2 && w[0] == '-' && w[1] == '-'; }

}  // namespace

FlagMap::FlagMap(const std::vector<std::string>& words, const std::set<std::string>& boolean, std::string source,
                 const std::set<std::string>& multi)
    : boolean_(boolean), source_(std::move(source)) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (!is_flag(words[i])) continue;
    std::string name = words[i].substr(2);
    const std::size_t eq = name.find('=');
    if (eq != std::string::npos) {
      values_[normalize(name.substr(0, eq))] = name.substr(eq + 1);
      continue;
    }
    name = normalize(name);
    if (multi.count(name)) {
      std::string all;
      while (i + 1 < words.size() && !is_flag(words[i + 1])) all += (all.empty() ? "" : " ") + words[++i];
      values_[name] = all;
      continue;
    }
    const bool takes_value = !boolean_.count(name) && i + 1 < words.size() && !is_flag(words[i + 1]);
    values_[name] = takes_value ? words[++i] : "";
  }
}

std::optional<std::string> FlagMap::text(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::optional<long long> FlagMap::integer(const std::string& name) const {
  auto v = text(name);
  if (!v) return std::nullopt;
  char* end = nullptr;
  const long long n = std::strtoll(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0')
    throw ScenarioError(fmt::format("{}: expected an integer, found '{}'{}", where(name), *v,
                                    v->empty() ? " (a variable the importer could not resolve?)" : ""));
  return n;
}

std::optional<double> FlagMap::number(const std::string& name) const {
  auto v = text(name);
  if (!v) return std::nullopt;
  char* end = nullptr;
  const double x = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0')
    throw ScenarioError(fmt::format("{}: expected a number, found '{}'", where(name), *v));
  return x;
}

void FlagMap::set(const std::string& name, std::string value, std::string origin, std::string label) {
  values_[name] = std::move(value);
  origins_[name] = std::move(origin);
  labels_[name] = std::move(label);
  absent_.erase(name);
}

std::string FlagMap::origins(std::initializer_list<std::string> names) const {
  std::string out;
  const bool sentences = std::any_of(names.begin(), names.end(), [&](const std::string& n) { return translated(n); });
  for (const std::string& n : names) {
    const std::string o = origin(n);
    if (o.empty() || out.find(o) != std::string::npos) continue;
    out += (out.empty() ? "" : sentences ? "; " : " ") + o;
  }
  return out;
}

std::string FlagMap::origin_or(const std::string& name, const std::string& fallback) const {
  if (has(name)) return origin(name);
  auto it = absent_.find(name);
  return it != absent_.end() ? it->second : fallback;
}

std::string FlagMap::label(const std::string& name) const {
  auto it = labels_.find(name);
  return it != labels_.end() ? it->second : "--" + name;
}

std::string FlagMap::where(const std::string& name) const {
  auto it = labels_.find(name);
  return it != labels_.end() ? it->second : fmt::format("{}: --{}", source_, name);
}

std::string FlagMap::origin(const std::string& name) const {
  if (auto it = origins_.find(name); it != origins_.end() && has(name)) return it->second;
  auto v = text(name);
  if (!v) return "";
  return v->empty() ? "--" + name : fmt::format("--{} {}", name, *v);
}

}  // namespace clustersim::scenarios::importers
