#include "topologies/placement.hpp"

#include <array>

namespace clustersim::topologies {

std::vector<std::vector<int>> groups_of(const Layout& l, GroupDim dim) {
  const std::array<int, 4> size = {l.tp, l.cp, l.pp, l.dp};  // innermost first
  const auto d = static_cast<std::size_t>(dim);
  int stride = 1;
  for (std::size_t i = 0; i < d; ++i) stride *= size[i];
  const int n = size[d];
  const int total = l.ranks();
  std::vector<std::vector<int>> out;
  for (int base = 0; base < total; ++base) {
    if ((base / stride) % n != 0) continue;  // base must have coordinate 0 along `dim`
    std::vector<int> g(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) g[static_cast<std::size_t>(i)] = base + i * stride;
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace clustersim::topologies
