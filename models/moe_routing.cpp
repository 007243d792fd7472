#include "models/moe_routing.hpp"

#include <algorithm>
#include <vector>

namespace clustersim::models {
namespace {

// C(a, q) / C(b, q): the chance that q draws without replacement from b items all avoid b − a
// given ones.
double draws_avoid(double a, double b, int q) {
  double p = 1;
  for (int i = 0; i < q; ++i) p *= std::max(0.0, a - i) / (b - i);
  return p;
}

// Experts [first, last) of block `i` of `n` over `experts`.
int block_start(int i, int n, int experts) { return int((long long)i * experts / n); }

int overlap(int a0, int a1, int b0, int b1) { return std::max(0, std::min(a1, b1) - std::max(a0, b0)); }

// P(no expert of a token lands on unit u).
// Group-limited: Megatron's group_limited_topk (megatron/core/transformer/moe/moe_utils.py) scores
// each group by the sum of its top (top_k / group_top_k) scores, keeps the best group_top_k groups
// and takes the top_k over their experts. Under balanced routing the kept groups are a uniform
// subset and each gives about top_k / group_top_k of the chosen experts (a group is kept because
// that many of its scores are high), so P(miss) is the mean over subsets T of the product of the
// per-group misses: the elementary symmetric polynomial e_g(f) / C(G, g).
double miss_share(const MoeSpec& moe, int units, int u) {
  const int E = moe.experts, k = moe.top_k;
  const int u0 = block_start(u, units, E), u1 = block_start(u + 1, units, E);
  if (!moe.group_limited()) return draws_avoid(E - (u1 - u0), E, k);
  const int G = moe.router_groups, g = moe.router_group_top_k, q = k / g, S = E / G;
  std::vector<double> e(std::size_t(g) + 1, 0.0);
  e[0] = 1;
  double subsets = 1;  // C(G, g), built alongside
  for (int j = 0; j < G; ++j) {
    const double f = draws_avoid(S - overlap(u0, u1, j * S, (j + 1) * S), S, q);
    for (int m = std::min(j + 1, g); m >= 1; --m) e[std::size_t(m)] += e[std::size_t(m - 1)] * f;
  }
  for (int i = 0; i < g; ++i) subsets = subsets * (G - i) / (i + 1);
  return e[std::size_t(g)] / subsets;
}

}  // namespace

double expected_units_touched(const MoeSpec& moe, int units) {
  if (units <= 1 || moe.experts <= 0) return 1.0;
  const int E = moe.experts;
  // Equal blocks that each lie in one group or hold whole groups look alike: one unit stands for all.
  const int S = moe.group_limited() ? E / moe.router_groups : E;
  const bool alike = E % units == 0 && (S % (E / units) == 0 || (E / units) % S == 0);
  if (alike) return units * (1 - miss_share(moe, units, 0));
  double touched = 0;
  for (int u = 0; u < units; ++u) touched += 1 - miss_share(moe, units, u);
  return touched;
}

}  // namespace clustersim::models
