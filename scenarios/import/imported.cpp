#include "scenarios/import/imported.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <cmath>
#include <map>

namespace clustersim::scenarios::importers {

void Imported::set(const std::string& path, const std::string& value, const std::string& origin) {
  for (auto& k : keys)
    if (k.path == path) {
      k.value = value;
      k.origin = origin;
      return;
    }
  keys.push_back({path, value, origin});
}

void Imported::erase(const std::string& path) {
  for (auto it = keys.begin(); it != keys.end(); ++it)
    if (it->path == path) {
      keys.erase(it);
      return;
    }
}

const ImportedKey* Imported::find(const std::string& path) const {
  for (const auto& k : keys)
    if (k.path == path) return &k;
  return nullptr;
}

long long most_chunk_layers(const Imported& imported, long long layers) {
  if (const ImportedKey* split = imported.find("parallelism.pp_layers")) {
    long long most = 0, cur = 0;
    for (char ch : split->value + ",") {
      if (ch >= '0' && ch <= '9') cur = cur * 10 + (ch - '0');
      else if (ch == ',') most = std::max(most, cur), cur = 0;
    }
    return most;
  }
  auto degree = [&](const char* path) {
    const ImportedKey* k = imported.find(path);
    return k ? std::max(1LL, std::stoll(k->value)) : 1LL;
  };
  const long long chunks = degree("parallelism.pp") * degree("parallelism.vpp");
  return (layers + chunks - 1) / chunks;
}

std::string yaml_number(double v) {
  if (std::isfinite(v) && v == std::round(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{}", v);
}

std::string yaml_string(const std::string& s) {
  const bool plain = !s.empty() && s.find_first_of(":#{}[],&*!|>'\"%@`") == std::string::npos &&
                     s.front() != ' ' && s.back() != ' ' && s.front() != '-' && s.front() != '?';
  if (plain) return s;
  std::string q = "\"";
  for (char c : s) q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return q + "\"";
}

namespace {

// The keys of one section as a tree, children in first-set order.
struct Node {
  std::string name;
  const ImportedKey* key = nullptr;
  std::vector<Node> children;
  Node& child(const std::string& n) {
    for (auto& c : children)
      if (c.name == n) return c;
    children.push_back({n, nullptr, {}});
    return children.back();
  }
};

void write(const Node& n, int indent, std::string& out) {
  const std::string pad(static_cast<std::size_t>(indent) * 2, ' ');
  if (n.key) {
    out += fmt::format("{}{}: {}", pad, n.name, n.key->value);
    if (!n.key->origin.empty()) out += fmt::format("  # {}", n.key->origin);
    out += '\n';
    return;
  }
  out += fmt::format("{}{}:\n", pad, n.name);
  for (const auto& c : n.children) write(c, indent + 1, out);
}

}  // namespace

std::string to_yaml(const Imported& imported, const std::vector<std::string>& header) {
  std::string out;
  for (const auto& h : header) out += fmt::format("# {}\n", h);
  out += fmt::format("name: {}\n", yaml_string(imported.name));
  static constexpr std::array kSections = {"model", "hardware", "cluster", "parallelism", "training", "network"};
  for (const char* section : kSections) {
    Node root{section, nullptr, {}};
    for (const auto& k : imported.keys) {
      if (k.path == section) {  // a scalar section, e.g. `hardware: h100-sxm`
        root.key = &k;
        continue;
      }
      if (k.path.rfind(std::string(section) + ".", 0) != 0) continue;
      Node* n = &root;
      std::size_t start = std::string(section).size() + 1;
      for (std::size_t dot; (dot = k.path.find('.', start)) != std::string::npos; start = dot + 1)
        n = &n->child(k.path.substr(start, dot - start));
      n->child(k.path.substr(start)).key = &k;
    }
    if (root.key || !root.children.empty()) write(root, 0, out);
  }
  if (!imported.warnings.empty()) {
    out += "# not modelled or assumed (check these):\n";
    for (const auto& w : imported.warnings) out += fmt::format("#   - {}\n", w);
  }
  return out;
}

}  // namespace clustersim::scenarios::importers
