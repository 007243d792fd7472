#include "reporters/collective_report.hpp"

#include <fmt/format.h>

#include "studies/counted.hpp"
#include "studies/json_text.hpp"
#include "topologies/placement.hpp"

namespace clustersim::reporters {

using topologies::GroupDim;

std::string collective_json(const studies::CollectiveRequest& q, const studies::CollectiveResult& res) {
  std::string out = "[\n";
  for (std::size_t i = 0; i < res.rows.size(); ++i) {
    const auto& r = res.rows[i];
    out += fmt::format(
        "  {{\"op\": \"{}\", \"topology\": {}, \"nodes\": {}, \"ranks\": {}, \"size_bytes\": {}, "
        "\"time_s\": {}, \"algbw_bytes_per_s\": {}, \"busbw_bytes_per_s\": {}, "
        "\"algorithm\": \"{}\", \"protocol\": \"{}\"",
        name(q.op), studies::json_quote(res.spec.name), res.nodes, res.group_ranks, studies::json_bytes(r.size_bytes), studies::json_number(r.time_s),
        studies::json_number(r.algbw), studies::json_number(r.busbw), name(r.t.algorithm),
        name(r.t.protocol));
    // The expert layout's keys only when one was given (a dense request's rows are as before).
    if (res.experts)
      out += fmt::format(", \"group\": \"{}\", \"gpus\": {}, \"ep\": {}, \"etp\": {}, \"edp\": {}, \"group_nodes\": {}",
                         topologies::name(q.group), res.gpus, res.layout.size(GroupDim::ep), res.layout.size(GroupDim::etp),
                         res.layout.size(GroupDim::edp), res.group_nodes);
    if (models::uses_ep_kernels(q.dispatcher))  // the bytes sent are size_bytes x dedup
      out += fmt::format(", \"dispatcher\": \"{}\", \"experts\": {}, \"top_k\": {}, \"dedup\": {}",
                         models::name(q.dispatcher), q.experts, q.top_k, studies::json_number(res.dedup));
    out += fmt::format("}}{}\n", i + 1 < res.rows.size() ? "," : "");
  }
  return out + "]\n";
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
