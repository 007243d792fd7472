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
    throw ScenarioError(fmt::format("{}: --{}: expected an integer, found '{}'{}", source_, name, *v,
                                    v->empty() ? " (a variable the importer could not resolve?)" : ""));
  return n;
}

std::optional<double> FlagMap::number(const std::string& name) const {
  auto v = text(name);
  if (!v) return std::nullopt;
  char* end = nullptr;
  const double x = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0')
    throw ScenarioError(fmt::format("{}: --{}: expected a number, found '{}'", source_, name, *v));
  return x;
}

std::string FlagMap::origin(const std::string& name) const {
  auto v = text(name);
  if (!v) return "";
  return v->empty() ? "--" + name : fmt::format("--{} {}", name, *v);
}

}  // namespace clustersim::scenarios::importers
