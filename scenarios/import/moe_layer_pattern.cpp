#include "scenarios/import/moe_layer_pattern.hpp"

#include <fmt/format.h>

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
  MoeLayerPattern p;
  const int n = static_cast<int>(is_moe.size());
  while (p.dense_layers < n && !is_moe[static_cast<std::size_t>(p.dense_layers)]) ++p.dense_layers;
  int moe = 0;
  for (bool b : is_moe) moe += b ? 1 : 0;
  if (moe == 0) return p;
  p.frequency = std::max(1, static_cast<int>(std::lround(static_cast<double>(n - p.dense_layers) / moe)));
  int expected = 0;
  for (int i = p.dense_layers; i < n; i += p.frequency) ++expected;
  if (expected != moe)
    p.note = fmt::format("MoE layer pattern ({} MoE of {} layers) approximated as {} dense layers then every {}-th layer MoE",
                         moe, n, p.dense_layers, p.frequency);
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
