#include "models/moe_exchanges.hpp"

#include <algorithm>
#include <vector>

#include "hardware/ep_kernels.hpp"
#include "models/moe_routing.hpp"

namespace clustersim::models {

using topologies::Collective;
using topologies::CollectiveTime;
using topologies::GroupDim;

namespace {

// Tokens of one direction over the EP group, per token copy of `row_bytes`. alltoall / deepep /
// hybridep: an all-to-all whose per-rank buffer is what the busiest rank receives (the step
// waits for it; its 1/ep own share stays local). allgather (Megatron's allgather dispatcher):
// every rank gathers all ep ranks' [T, h] tokens and the combine reduce-scatters them. DeepEP and
// HybridEP send fewer bytes (deepep_node_dedup) with SMs of their own (the profile's comm_sms for
// NCCL's; training.moe_dispatcher_sms for theirs), and within one NVLink domain their kernels run
// at no more than their measured rate (ep_kernel_paced).
// `dedup`: deepep_node_dedup's factor for DeepEP / HybridEP, else 1.
CollectiveTime ep_exchange(const TrainingSpec& t, const ParallelSpec& p, const MoeLayerOps& o, double row_bytes,
                           bool dispatch, double dedup, const topologies::Network& net) {
  if (t.moe_dispatcher == MoeDispatcher::allgather)
    return net.cost(dispatch ? Collective::all_gather : Collective::reduce_scatter, GroupDim::ep,
                    units::Bytes(o.tokens * row_bytes * p.ep));
  return net.cost(Collective::all_to_all, GroupDim::ep, units::Bytes(o.tokens * o.load_imbalance * row_bytes * dedup));
}

// The nodes (NVLink domains) the first EP group spans, and its ranks.
struct EpSpan {
  int nodes = 0, ranks = 0;
};
EpSpan ep_group_span(const topologies::Network& net) {
  const auto groups = topologies::groups_of(net.layout(), GroupDim::ep);
  std::vector<int> nodes;
  for (int gpu : groups.front()) {
    const int node = gpu / net.spec().gpus_per_node;
    if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
  }
  return {int(nodes.size()), int(groups.front().size())};
}

// Across nodes the RDMA copies (one per node) bound the exchange; within one node DeepEP's layout
// (get_dispatch_layout's is_token_in_rank; HybridEP alike) sends a token once to each rank that
// hosts one of its experts, and the rank expands it to its experts' copies locally. The factor on
// the top_k copies: the units a token touches over top_k (the token's own unit included, as the
// all-to-all's 1/ep local share is).
double dedup_over(const MoeSpec& moe, EpSpan span) {
  const int N = span.nodes > 1 ? span.nodes : span.ranks;
  if (N <= 1 || moe.experts < N) return 1.0;
  return expected_units_touched(moe, N) / moe.top_k;
}

}  // namespace

double deepep_node_dedup(const MoeSpec& moe, const topologies::Network& net) {
  return dedup_over(moe, ep_group_span(net));
}

TokenSpread token_spread(const MoeSpec& moe, const topologies::Network& net) {
  const EpSpan span = ep_group_span(net);
  TokenSpread s;
  s.nodes = span.nodes > 1;
  s.units = s.nodes ? span.nodes : span.ranks;
  s.touched = expected_units_touched(moe, s.units);
  return s;
}

namespace {

CollectiveTime ep_kernel_paced(const CollectiveTime& c, const ModelSpec& m, const TrainingSpec& t, const MoeLayerOps& o,
                               hardware::EpKernelOp op, const hardware::GpuSpec& gpu, EpSpan span,
                               double ranks_touched) {
  if (!uses_ep_kernels(t.moe_dispatcher) || c.time.si() <= 0) return c;
  if (span.nodes > 1) return c;  // RDMA between the domains bounds it; no kernel rows there
  const int ranks = span.ranks;
  const auto impl =
      t.moe_dispatcher == MoeDispatcher::hybridep ? hardware::EpKernelImpl::hybridep : hardware::EpKernelImpl::deepep;
  const units::BytesPerSecond rate = hardware::ep_kernel_rate(gpu, impl, op, ranks, t.moe_dispatcher_sms);
  if (rate.si() <= 0) return c;
  // The rows the busiest rank receives (or sends back): one per (token, rank) pair, the ranks
  // hosting one of the token's experts (`ranks_touched` per token); FP8 rows carry a 4-byte scale
  // per 128 values.
  const double rows = o.tokens * o.load_imbalance * ranks_touched;
  const double row_bytes = m.expert_width() * (op == hardware::EpKernelOp::dispatch_fp8 ? 1.0 + 4.0 / 128 : 2.0);
  return topologies::paced(c, units::Seconds(rows * row_bytes / rate.si()));
}

}  // namespace

RoutedExchanges routed_exchanges(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const MoeLayerOps& o,
                                 const hardware::GpuSpec& gpu, const topologies::Network& net) {
  const double h = m.expert_width(), k = m.moe.top_k, e = hardware::storage_bytes(t.precision);
  const double dispatch_row = (t.moe_dispatcher == MoeDispatcher::allgather ? 1.0 : k) * h;
  const double operand = hardware::gemm_operand_bytes(t.precision);
  // Dispatch in FP8 when training in FP8, combine and every backward exchange in BF16
  // (DeepSeek-V3 §3.3.2); the allgather dispatcher moves each token once, not once per expert.
  // Backward, the combine's gradient goes out as a dispatch and the dispatch's comes back as a
  // combine (Megatron's fused_a2a: each one's backward is the other).
  using Op = hardware::EpKernelOp;
  const Op dispatch_op = operand < 2 ? Op::dispatch_fp8 : Op::dispatch_bf16;
  RoutedExchanges x;
  if (p.ep > 1) {  // the group's span once: every exchange crosses the same ranks
    const EpSpan span = ep_group_span(net);
    const bool kernels = uses_ep_kernels(t.moe_dispatcher);
    const double dedup = kernels ? dedup_over(m.moe, span) : 1.0;
    // Paced only within one domain (ep_kernel_paced): the ranks a token reaches there, once per layer.
    const double ranks_touched = kernels && span.nodes <= 1 ? expected_units_touched(m.moe, span.ranks) : 0.0;
    auto exchange = [&](double row_bytes, bool dispatch, Op kernel) {
      return ep_kernel_paced(ep_exchange(t, p, o, row_bytes, dispatch, dedup, net), m, t, o, kernel, gpu, span,
                             ranks_touched);
    };
    x.dispatch = exchange(dispatch_row * operand, true, dispatch_op);
    x.combine = exchange(dispatch_row * e, false, Op::combine);
    x.combine_grad = exchange(dispatch_row * e, true, Op::dispatch_bf16);
    x.dispatch_grad = exchange(dispatch_row * e, false, Op::combine);
  }
  if (p.etp > 1) {  // the received tokens gathered over the ETP group, the outputs reduce-scattered
    x.etp_ag = net.cost(Collective::all_gather, GroupDim::etp, units::Bytes(o.etp_gather_bytes));
    x.etp_rs = net.cost(Collective::reduce_scatter, GroupDim::etp, units::Bytes(o.etp_gather_bytes));
  }
  return x;
}

}  // namespace clustersim::models
