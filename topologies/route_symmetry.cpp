#include "topologies/route_symmetry.hpp"

#include <algorithm>

namespace clustersim::topologies {

namespace {

using Run = NodeRelabel::Run;

// Orders two nodes' destination patterns (positions inside the node): more first, then by
// position; 0 when equal.
int compare_patterns(const std::vector<int>& gpus, int k, const Run& a, const Run& b) {
  if (a.end - a.begin != b.end - b.begin) return a.end - a.begin > b.end - b.begin ? -1 : 1;
  for (int i = a.begin, j = b.begin; i < a.end; ++i, ++j)
    if (gpus[std::size_t(i)] % k != gpus[std::size_t(j)] % k) return gpus[std::size_t(i)] % k < gpus[std::size_t(j)] % k ? -1 : 1;
  return 0;
}

}  // namespace

void canonical_relabel(int k, int group_nodes, int groups, int src, std::span<const int> dsts, NodeRelabel& out) {
  const int nodes = group_nodes * groups, src_node = src / k, src_group = src_node / group_nodes;
  std::vector<int>& gpus = out.sorted;
  gpus.assign(dsts.begin(), dsts.end());
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  // Runs of the nodes holding destinations, other than the source's node, by group and pattern.
  std::vector<Run>& runs = out.runs;
  runs.clear();
  for (int i = 0, n = int(gpus.size()); i < n;) {
    int j = i;
    while (j < n && gpus[std::size_t(j)] / k == gpus[std::size_t(i)] / k) ++j;
    if (gpus[std::size_t(i)] / k != src_node) runs.push_back({gpus[std::size_t(i)] / k, gpus[std::size_t(i)] / k / group_nodes, i, j});
    i = j;
  }
  std::sort(runs.begin(), runs.end(), [&](const Run& a, const Run& b) {
    if (a.group != b.group) return a.group < b.group;
    const int c = compare_patterns(gpus, k, a, b);
    return c != 0 ? c < 0 : a.node < b.node;
  });
  // Groups holding destinations (the source's aside), as [first run, last run), ordered by their
  // runs' patterns: more runs first, then run by run; equal groups in their own order.
  std::vector<Run>& spans = out.spans;
  spans.clear();
  int src_begin = 0, src_end = 0;
  for (int i = 0, n = int(runs.size()); i < n;) {
    int j = i;
    while (j < n && runs[std::size_t(j)].group == runs[std::size_t(i)].group) ++j;
    if (runs[std::size_t(i)].group == src_group) src_begin = i, src_end = j;
    else spans.push_back({-1, runs[std::size_t(i)].group, i, j});
    i = j;
  }
  std::sort(spans.begin(), spans.end(), [&](const Run& a, const Run& b) {
    if (a.end - a.begin != b.end - b.begin) return a.end - a.begin > b.end - b.begin;
    for (int i = a.begin, j = b.begin; i < a.end; ++i, ++j)
      if (const int c = compare_patterns(gpus, k, runs[std::size_t(i)], runs[std::size_t(j)]); c != 0) return c < 0;
    return a.group < b.group;
  });
  out.node_to.assign(std::size_t(nodes), -1);
  out.node_from.assign(std::size_t(nodes), -1);
  out.group_from.clear();
  std::vector<char>& placed = out.placed;
  placed.assign(std::size_t(groups), 0);
  // Canonical group `cg` is group g: its listed nodes first, then the rest in their own order.
  auto place = [&](int g, int first_run, int last_run, bool with_source) {
    const int cg = int(out.group_from.size());
    out.group_from.push_back(g);
    placed[std::size_t(g)] = 1;
    int slot = cg * group_nodes;
    auto put = [&](int n) { out.node_to[std::size_t(n)] = slot, out.node_from[std::size_t(slot)] = n, ++slot; };
    if (with_source) put(src_node);
    for (int r = first_run; r < last_run; ++r) put(runs[std::size_t(r)].node);
    for (int n = g * group_nodes; n < (g + 1) * group_nodes; ++n)
      if (out.node_to[std::size_t(n)] < 0) put(n);
  };
  place(src_group, src_begin, src_end, true);
  for (const Run& s : spans) place(s.group, s.begin, s.end, false);
  for (int g = 0; g < groups; ++g)
    if (!placed[std::size_t(g)]) place(g, 0, 0, false);
  auto map = [&](int gpu) { return out.node_to[std::size_t(gpu / k)] * k + gpu % k; };
  out.src = map(src);
  out.dsts.clear();
  for (int g : gpus) out.dsts.push_back(map(g));
  std::sort(out.dsts.begin(), out.dsts.end());
}

}  // namespace clustersim::topologies
