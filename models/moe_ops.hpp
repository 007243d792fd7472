#pragma once
// The kernels of one Mixture-of-Experts MLP for one micro-batch on one rank, and the bytes its
// dispatch/combine all-to-alls move — as data for the step builder, which places them in the
// task graph and sends the all-to-alls over the EP group of the scenario's network.
#include "hardware/gpu_spec.hpp"
#include "models/layer_ops.hpp"
#include "models/model_spec.hpp"
#include "models/training_spec.hpp"

namespace clustersim::models {

/// Expert parallelism folded over the attention layout (Megatron "parallel folding",
/// arXiv 2504.14960): per pipeline stage tp·cp·dp = etp·ep·edp.
struct ExpertParallel {
  int ep = 1;   ///< ranks the routed experts are spread over
  int etp = 1;  ///< ranks one expert's weights are split over (column/row like TP)
  int edp = 1;  ///< replicas of each expert shard (gradients reduced over them)
};

/// The expert layout of `p` as moe_layer_ops takes it.
inline ExpertParallel expert_parallel(const ParallelSpec& p) { return {p.ep, p.etp, p.edp()}; }

/// Routed tokens on the busiest EP rank / the mean, for routing that is balanced in
/// expectation (what auxiliary-loss and DeepSeek's loss-free balancing aim at), from sampling
/// alone: each of the ep·T tokens picks top_k distinct of `experts` experts; the count landing
/// on one rank's experts/ep experts has mean T·k and (hypergeometric per token) variance
/// T·k·(1 − 1/ep)·(E − k)/(E − 1). The busiest of ep ranks is μ + z(ep)·σ, with z(ep) the
/// expected maximum of ep standard normals (Blom 1958: Φ⁻¹((ep − 0.375)/(ep + 0.25))).
/// This is a floor: persistent expert-popularity skew adds to it (give moe_load_imbalance).
/// `tokens` is T, the tokens one rank routes per micro-batch. 1.0 when ep == 1 or k == E.
double auto_load_imbalance(int experts, int top_k, int ep, double tokens);

/// Φ⁻¹, the standard normal quantile (Acklam's rational approximation, |rel. error| < 1.2e-9).
double normal_quantile(double p);

struct MoeLayerOps {
  PassCost router_fwd, router_bwd;      ///< router GEMM, softmax/sigmoid and top-k
  PassCost permute_fwd, permute_bwd;    ///< token permute/unpermute around the all-to-alls
  PassCost experts_fwd, experts_bwd;    ///< grouped expert GEMMs and activation (busiest rank)
  PassCost shared_fwd, shared_bwd;      ///< shared experts (TP-split like a dense MLP)
  /// Bytes this rank sends to the other EP ranks, mean over ranks, per all-to-all. Backward
  /// runs the same two in reverse (combine's gradient is dispatched, dispatch's combined).
  double dispatch_bytes = 0, combine_bytes = 0;
  /// Bytes the busiest rank receives in the dispatch (and sends back in the combine).
  double dispatch_bytes_busiest = 0;
  /// With etp > 1: the [routed tokens, h] tensor all-gathered before and reduce-scattered
  /// after the experts over the ETP group.
  double etp_gather_bytes = 0;
  double tokens = 0;             ///< tokens this rank routes (T)
  double routed_tokens = 0;      ///< token copies the busiest rank's experts process
  double tokens_per_expert = 0;  ///< M of each grouped GEMM on the busiest rank
  int local_experts = 0;
  double load_imbalance = 1.0;   ///< applied (capped at capacity_factor when tokens are dropped)
};

/// One MoE layer. `load_imbalance` ≤ 0 means auto. Tokens per rank: b·s/cp, ÷ tp with sequence
/// parallelism (Megatron requires SP for MoE with TP > 1; each TP rank routes its own slice).
MoeLayerOps moe_layer_ops(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const ExpertParallel& ep,
                          const hardware::GpuSpec& gpu, double load_imbalance);

}  // namespace clustersim::models
