#pragma once
// The token exchanges of one MoE layer over the EP group of the scenario's network: dispatch and
// combine, forward and backward, as NCCL's all-to-all (or Megatron's allgather) moves them, or as
// DeepEP's and HybridEP's kernels do (fewer bytes, at no more than their measured rate within an
// NVLink domain), and the ETP gather around the experts.
#include "hardware/gpu_spec.hpp"
#include "models/model_spec.hpp"
#include "models/moe_ops.hpp"
#include "models/moe_routing.hpp"
#include "models/training_spec.hpp"
#include "topologies/network.hpp"

namespace clustersim::models {

/// DeepEP's internode kernels send a token once to each node that hosts one of its experts and
/// fan it out over NVLink there (DeepSeek-V3 §3.2.2), where a plain all-to-all sends every copy;
/// within one node (NVLink domain) DeepEP and HybridEP send it once to each rank that hosts one.
/// The factor on the EP all-to-all's bytes (training.moe_dispatcher: deepep or hybridep;
/// `clustersim collective --dispatcher deepep`): the distinct units a token's experts touch over
/// its top_k copies (expected_units_touched, models/moe_routing.hpp), over the nodes of `net`'s
/// first EP group, or its ranks when it spans one node. Group-limited routing (DeepSeek-V3's
/// node-limited routing: model.moe.router_groups / router_group_top_k) caps the units a token
/// reaches.
double deepep_node_dedup(const MoeSpec& moe, const topologies::Network& net);

/// Where a token's routed experts land on `net`'s first EP group (TokenSpread, moe_routing.hpp).
TokenSpread token_spread(const MoeSpec& moe, const topologies::Network& net);

/// The EP (and ETP) exchanges of one MoE layer on the scenario's network.
/// Backward, combine_grad carries the combine's gradient out (a dispatch) and dispatch_grad the
/// dispatch's back (a combine). With DeepEP / HybridEP inside one NVLink domain each runs no
/// faster than its kernel's measured rate at training.moe_dispatcher_sms (hardware/ep_kernels.hpp).
struct RoutedExchanges {
  topologies::CollectiveTime dispatch, combine, combine_grad, dispatch_grad, etp_ag, etp_rs;
};
RoutedExchanges routed_exchanges(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                 const MoeLayerOps& ops, const hardware::GpuSpec& gpu, const topologies::Network& net);

}  // namespace clustersim::models
