#include "reporters/collective_report.hpp"

#include <fmt/format.h>

#include "studies/counted.hpp"
#include "studies/json_value.hpp"
#include "topologies/placement.hpp"

namespace clustersim::reporters {

using topologies::GroupDim;

std::string collective_json(const studies::CollectiveRequest& q, const studies::CollectiveResult& res) {
  using studies::Json;
  Json rows = Json::array();
  for (const auto& r : res.rows) {
    Json row = {{"op", name(q.op)},
                {"topology", res.spec.name},
                {"nodes", res.nodes},
                {"ranks", res.group_ranks},
                {"size_bytes", studies::json_bytes_value(r.size_bytes)},
                {"time_s", studies::json_number_value(r.time_s)},
                {"algbw_bytes_per_s", studies::json_number_value(r.algbw)},
                {"busbw_bytes_per_s", studies::json_number_value(r.busbw)},
                {"algorithm", name(r.t.algorithm)},
                {"protocol", name(r.t.protocol)}};
    // The expert layout's keys only when one was given (a dense request's rows are as before).
    if (res.experts) {
      row["group"] = topologies::name(q.group);
      row["gpus"] = res.gpus;
      row["ep"] = res.layout.size(GroupDim::ep);
      row["etp"] = res.layout.size(GroupDim::etp);
      row["edp"] = res.layout.size(GroupDim::edp);
      row["group_nodes"] = res.group_nodes;
    }
    if (models::uses_ep_kernels(q.dispatcher)) {  // the bytes sent are size_bytes x dedup
      row["dispatcher"] = models::name(q.dispatcher);
      row["experts"] = q.experts;
      row["top_k"] = q.top_k;
      row["dedup"] = studies::json_number_value(res.dedup);
    }
    rows.push_back(std::move(row));
  }
  return studies::json_dump(rows) + "\n";
}

std::string collective_text(const studies::CollectiveRequest& q, const studies::CollectiveResult& res) {
  const auto& l = res.layout;
  std::string out;
  if (q.gpus > 0)
    out += fmt::format("# clustersim collective: {} on {} ({}), {} on {} of {}\n", name(q.op), res.spec.name,
                       res.spec.description, studies::counted(res.gpus, "GPU"), studies::counted(res.nodes, "node"),
                       res.spec.gpus_per_node);
  else
    out += fmt::format("# clustersim collective: {} on {} ({}), {} x {}\n", name(q.op), res.spec.name,
                       res.spec.description, studies::counted(res.nodes, "node"), studies::counted(res.spec.gpus_per_node, "GPU"));
  const std::string experts = res.experts ? fmt::format("; experts etp {} x ep {} x edp {} per stage", l.size(GroupDim::etp),
                                                        l.size(GroupDim::ep), l.size(GroupDim::edp))
                                          : "";
  std::string placement;  // only when not the default (a dense request's header is as before)
  if (l.order != topologies::kDefaultPlacement)
    placement = fmt::format(", placed {},{},{},{} (innermost first)", name(l.order[0]), name(l.order[1]), name(l.order[2]),
                            name(l.order[3]));
  out += fmt::format("# layout tp {} x cp {} x pp {} x dp {}{}{}; {} concurrent {} groups of {} ranks", l.sizes[0], l.sizes[1],
                     l.sizes[2], l.sizes[3], placement, experts, res.groups, topologies::name(q.group), res.group_ranks);
  out += res.experts ? fmt::format(", each over at most {}\n", studies::counted(res.group_nodes, "node")) : "\n";
  if (models::uses_ep_kernels(q.dispatcher))
    out += fmt::format(
        "# {} dispatcher ({} experts, top-{}): one copy per destination {}, {:.4f} x the bytes of a "
        "plain all-to-all; size is the plain all-to-all's\n",
        models::name(q.dispatcher), q.experts, q.top_k, res.group_nodes > 1 ? "node" : "rank", res.dedup);
  out += fmt::format("# {:>14} {:>12} {:>12} {:>12}  {:<13} {}\n", "size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)",
                     "algorithm", "protocol");
  for (const auto& r : res.rows)
    out += fmt::format("  {:>14.0f} {:>12.2f} {:>12.2f} {:>12.2f}  {:<13} {}\n", r.size_bytes, r.time_s * 1e6, r.algbw / 1e9,
                       r.busbw / 1e9, name(r.t.algorithm), name(r.t.protocol));
  return out;
}

}  // namespace clustersim::reporters
