#include "scenarios/import/moe_layer_pattern.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "scenarios/error.hpp"

namespace clustersim::scenarios::importers {

// "[a,b,...]*n + [..] + ..." (optionally in parentheses) as a flat list.
std::vector<bool> eval_layer_list(const std::string& s, const std::string& flag, const std::string& source) {
  std::string t;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) t += c;
  if (t.size() >= 2 && t.front() == '(' && t.back() == ')') t = t.substr(1, t.size() - 2);
  std::vector<bool> out;
  std::size_t i = 0;
  auto fail = [&] { throw ScenarioError(fmt::format("{}: --{} '{}': expected an integer or a list expression like ([0]*3+[1]*58)", source, flag, s)); };
  while (i < t.size()) {
    if (t[i] != '[') fail();
    const std::size_t close = t.find(']', i);
    if (close == std::string::npos) fail();
    std::vector<bool> items;
    for (std::size_t j = i + 1; j < close; ++j)
      if (t[j] == '0' || t[j] == '1') items.push_back(t[j] == '1');
      else if (t[j] != ',') fail();
    i = close + 1;
    long long times = 1;
    if (i < t.size() && t[i] == '*') {
      std::size_t used = 0;
      times = std::stoll(t.substr(i + 1), &used);
      i += 1 + used;
    }
    for (long long k = 0; k < times; ++k) out.insert(out.end(), items.begin(), items.end());
    if (i < t.size()) {
      if (t[i] != '+') fail();
      ++i;
    }
  }
  return out;
}

MoeLayerPattern moe_pattern_of(const std::vector<bool>& is_moe) {
  // The scenario's rule (ModelSpec::moe_layer): after dense_layers, the last layer of every
  // `frequency` is MoE. Read off the first two MoE layers, then checked against the whole list.
  MoeLayerPattern p;
  const int n = static_cast<int>(is_moe.size());
  std::vector<int> at;
  for (int i = 0; i < n; ++i)
    if (is_moe[static_cast<std::size_t>(i)]) at.push_back(i);
  if (at.empty()) {
    p.dense_layers = n;
    return p;
  }
  p.frequency = at.size() > 1 ? at[1] - at[0] : 1;
  p.dense_layers = std::max(0, at[0] - (p.frequency - 1));
  int ruled = 0;
  bool exact = true;
  for (int i = 0; i < n; ++i) {
    const bool moe = i >= p.dense_layers && (i - p.dense_layers) % p.frequency == p.frequency - 1;
    ruled += moe ? 1 : 0;
    exact = exact && moe == is_moe[static_cast<std::size_t>(i)];
  }
  if (!exact)
    p.note = fmt::format("MoE layer pattern ({} MoE of {} layers) approximated as {} dense layers then the last of every {} "
                         "layers MoE ({} MoE)",
                         at.size(), n, p.dense_layers, p.frequency, ruled);
  return p;
}

MoeLayerPattern parse_moe_layer_freq(const std::string& text, int layers, const std::string& source) {
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
    MoeLayerPattern p;
    p.frequency = std::stoi(text);
    if (p.frequency < 1) throw ScenarioError(fmt::format("{}: --moe-layer-freq {}: must be at least 1", source, text));
    return p;
  }
  const std::vector<bool> list = eval_layer_list(text, "moe-layer-freq", source);
  if (static_cast<int>(list.size()) != layers)
    throw ScenarioError(fmt::format("{}: --moe-layer-freq lists {} layers but --num-layers is {}", source, list.size(), layers));
  return moe_pattern_of(list);
}

}  // namespace clustersim::scenarios::importers
