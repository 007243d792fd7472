#include "topologies/placement.hpp"

namespace clustersim::topologies {

namespace {

// The expert groups: each rank's place among its stage's tp·cp·dp ranks (tp fastest), read as
// (etp, ep, edp) coordinates (etp fastest); a group varies one of them, the rest and pp fixed.
std::vector<std::vector<int>> folded_groups(const Layout& l, GroupDim dim) {
  const int tp = l.size(GroupDim::tp), cp = l.size(GroupDim::cp), dp = l.size(GroupDim::dp);
  const int etp = l.size(GroupDim::etp), ep = l.size(GroupDim::ep);
  const int fold = tp * cp * dp, inner = dim == GroupDim::etp ? 1 : dim == GroupDim::ep ? etp : etp * ep;
  const int n = dim == GroupDim::etp ? etp : dim == GroupDim::ep ? ep : fold / (etp * ep);
  auto coord = [&](int r, GroupDim d) { return (r / l.stride(d)) % l.size(d); };
  std::vector<std::vector<int>> out(static_cast<std::size_t>(l.ranks() / n), std::vector<int>(static_cast<std::size_t>(n)));
  for (int r = 0; r < l.ranks(); ++r) {
    const int a = coord(r, GroupDim::tp) + tp * (coord(r, GroupDim::cp) + cp * coord(r, GroupDim::dp));
    const int member = (a / inner) % n, rest = a % inner + inner * (a / (inner * n));
    out[static_cast<std::size_t>(coord(r, GroupDim::pp) * (fold / n) + rest)][static_cast<std::size_t>(member)] = r;
  }
  return out;
}

}  // namespace

std::vector<std::vector<int>> groups_of(const Layout& l, GroupDim dim) {
  if (folded(dim)) return folded_groups(l, dim);
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
