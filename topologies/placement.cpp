#include "topologies/placement.hpp"

namespace clustersim::topologies {

std::vector<std::vector<int>> groups_of(const Layout& l, GroupDim dim) {
  const int stride = l.stride(dim);
  const int n = l.size(dim);
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
