#include "models/moe_ops.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "models/detail/kernel_builder.hpp"
#include "models/layer_ops_host.hpp"
#include "models/moe_routing.hpp"

namespace clustersim::models {

double normal_quantile(double p) {
  // P. J. Acklam, "An algorithm for computing the inverse normal cumulative distribution
  // function" (2003): rational approximations on the central region and the two tails.
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  const double lo = 0.02425;
  auto tail = [&](double q) {
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  };
  if (p < lo) return tail(std::sqrt(-2 * std::log(p)));
  if (p > 1 - lo) return -tail(std::sqrt(-2 * std::log(1 - p)));
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

double auto_load_imbalance(int experts, int top_k, int ep, double tokens) {
  if (ep <= 1 || top_k >= experts || tokens <= 0) return 1.0;
  const double E = experts, k = top_k, n = ep;
  const double z = normal_quantile((n - 0.375) / (n + 0.25));
  const double cv = std::sqrt((1 - 1 / n) * (E - k) / ((E - 1) * tokens * k));
  // A rank cannot receive more than every token's copies that its experts can take.
  const double ceiling = std::min(k, E / n) / k * n;
  return std::min(1 + z * cv, ceiling);
}

using hardware::GpuSpec;
using hardware::Precision;

namespace {

// What Megatron-Core runs around the experts' grouped GEMMs for a clamped GLU and for expert
// biases (core 0.15-0.18 moe/experts.py TEGroupedMLP, fusions/fused_bias_geglu.py).
void expert_extras(const ModelSpec& m, const TrainingSpec& t, const KernelBuilder& k, double ffn_local,
                   MoeLayerOps* o) {
  const double e = hardware::storage_bytes(t.precision);
  // The clamped GLU (weighted_bias_quick_geglu_impl / weighted_bias_swiglu_impl with a clamp
  // value): the fc1 output [rows, 2f] is split, both halves clamped and concatenated again
  // before the fused kernel, F bytes: 4F in 3 kernels; backward, the two clamp masks and the
  // split's cat, 5F in 3 kernels. Under experts.act, so moe_act recompute reruns it.
  if (m.activation_clamp > 0) {
    const double fc1_out = o->routed_tokens * 2 * ffn_local * e;
    o->experts_fwd.add(as_kernels(k.memory("experts.act.clamp", 4 * fc1_out), 3, k.gpu, t));
    o->experts_bwd.add(as_kernels(k.memory("experts.act.clamp.bwd", 5 * fc1_out), 3, k.gpu, t));
  }
  // Expert biases: fc1's rides in the grouped GEMM's epilogue; fc2's is added after it with the
  // routing probabilities (skip_bias_add, _apply_bias): per local expert b·p and t + b·p, then one
  // cat, 6Y over the fc2 output's Y bytes; backward, the bias and probability gradients, 3Y.
  if (m.bias) {
    const double fc2_out = o->routed_tokens * m.expert_width() * e;
    o->experts_fwd.add(as_kernels(k.memory("experts.fc2_bias", 6 * fc2_out), 2 * o->local_experts + 1, k.gpu, t));
    o->experts_bwd.add(as_kernels(k.memory("experts.fc2_bias.bwd", 3 * fc2_out), 2 * o->local_experts, k.gpu, t));
  }
}

// The bytes one MoE layer's permute and unpermute move (backward moves the same), `tokens` a
// rank's own and `received` the expert rows it gets, by where the dispatcher arranges the rows
// (Megatron-Core moe/token_dispatcher.py, as NeMo AutoModel vendors it at 6255c40a7):
// - alltoall, allgather: gather each token once per chosen expert (read T·h, write T·k·h) and,
//   after the all-to-all, sort the received rows by local expert (read + write); unpermute
//   mirrors both and sums the k weighted outputs;
// - deepep, hybridep: the dispatch kernel reads the tokens themselves and sends one copy per rank
//   a token reaches, so the permute after it spreads those T·u rows over the local experts' rows
//   (read T·u·h, write the received rows) and the unpermute before the combine sums them back;
//   the combine kernel sums over ranks. DeepEP: get_permuted_hidden_states_by_experts; HybridEP:
//   dispatch_with_permute's standalone permute kernel (DeepEP hybrid-ep executor.cu
//   dispatch_postprocess; its fused path, fuse_permute_dispatch, came in 2026-03-31 and is off by
//   default; Megatron-Bridge issue #2886, 2026-03 to 05: its recipes run HybridEP with the local
//   permute unfused, the fusion "no e2e improvement" and not enabled for 26.06).
double permute_bytes(const ModelSpec& m, MoeDispatcher d, int ep, double tokens, double received, double e) {
  const double row = m.expert_width() * e;
  if (d == MoeDispatcher::deepep || d == MoeDispatcher::hybridep)
    return 2 * (tokens * expected_units_touched(m.moe, ep) + received) * row;
  return 2 * tokens * row * (1 + m.moe.top_k) + 4 * received * row;
}

}  // namespace

MoeLayerOps moe_layer_ops(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const ExpertParallel& x,
                          const GpuSpec& gpu, double load_imbalance) {
  const KernelBuilder k = KernelBuilder::training(gpu, t, p);
  const double h = m.hidden, E = m.moe.experts, topk = m.moe.top_k, e = hardware::storage_bytes(t.precision);
  const double seq_tokens = double(t.micro_batch) * t.seq_len / p.cp;
  MoeLayerOps o;
  o.tokens = p.sequence_parallel ? seq_tokens / p.tp : seq_tokens;
  o.load_imbalance = load_imbalance > 0 ? load_imbalance : auto_load_imbalance(m.moe.experts, m.moe.top_k, x.ep, o.tokens);
  // Dropping tokens beyond capacity_factor × the mean caps the busiest expert (GShard, Switch).
  if (m.moe.capacity_factor > 0) o.load_imbalance = std::min(o.load_imbalance, m.moe.capacity_factor);
  o.local_experts = std::max(1, m.moe.experts / x.ep);
  const double received = o.tokens * topk * o.load_imbalance;  // busiest rank, after the dispatch
  o.routed_tokens = received * x.etp;
  o.tokens_per_expert = o.routed_tokens / o.local_experts;

  // Router: logits [T, E], then softmax/sigmoid and top-k over fp32 scores (read logits, write
  // scores, read them for top-k; write k indices and probabilities).
  const double scores = o.tokens * E * 4.0;
  o.router_fwd.add(k.gemm("router", o.tokens, E, h));
  o.router_fwd.add(k.memory("router.topk", 3 * scores + o.tokens * topk * 12.0));
  o.router_bwd.add(k.memory("router.topk.bwd", 3 * scores));
  o.router_bwd.add(k.gemm("router.dgrad", o.tokens, h, E));
  o.router_bwd.add(as_weight_grad(k.gemm("router.wgrad", h, E, o.tokens), o.tokens, E, h));

  const double permute = permute_bytes(m, t.moe_dispatcher, x.ep, o.tokens, received, e);
  o.permute_fwd.add(k.memory("moe.permute+unpermute", permute));
  o.permute_bwd.add(k.memory("moe.permute+unpermute.bwd", permute));

  // Latent MoE: the tokens go down to the latent width before the dispatch and back up after the
  // combine (Megatron fc1_latent_proj / fc2_latent_proj, on every rank's own tokens); the
  // experts and the exchanges work on the latent vector.
  const double w = m.expert_width();
  if (m.moe.latent_dim > 0) {  // in their own precision when the recipe sets one (module_precision)
    const KernelBuilder lp = KernelBuilder::training(gpu, t.for_module(QuantModule::moe_latent_proj), p);
    lp.linear(&o.permute_fwd, &o.permute_bwd, "moe.latent_down", o.tokens, w, h);
    lp.linear(&o.permute_fwd, &o.permute_bwd, "moe.latent_up", o.tokens, h, w);
  }
  k.mlp(&o.experts_fwd, &o.experts_bwd, "experts", o.local_experts, o.tokens_per_expert, w,
        double(m.moe.expert_ffn_hidden) / x.etp, gated(m.activation), /*routed=*/true);
  // Transformer Engine's GroupedLinear runs a grouped GEMM as one cuBLAS GEMM per local expert
  // over its compute streams (TE v2.9 common/gemm/cublaslt_gemm.cu multi_stream_cublas_gemm; the
  // CUTLASS grouped kernel is Hopper-only and opt-in, NVTE_USE_CUTLASS_GROUPED_GEMM): one host
  // launch per expert. The GPU time stays the grouped cost (the streams overlap the gaps).
  for (PassCost* pass : {&o.experts_fwd, &o.experts_bwd})
    for (KernelOp& op : pass->ops)
      if (op.kind == OpKind::gemm) op.kernels = o.local_experts;
  expert_extras(m, t, k, double(m.moe.expert_ffn_hidden) / x.etp, &o);
  if (m.moe.shared_experts > 0)
    k.mlp(&o.shared_fwd, &o.shared_bwd, "shared_experts", 1, seq_tokens, h,
          double(m.moe.shared_experts) * m.moe.expert_ffn_hidden / p.tp, gated(m.activation));

  // Dispatch in FP8 when training in FP8, combine in BF16 (DeepSeek-V3 §3.3.2); a 1/ep share of
  // each rank's token copies stays on the rank.
  const double remote = double(x.ep - 1) / x.ep;
  const double dispatch_e = hardware::gemm_operand_bytes(t.precision);
  o.dispatch_bytes = o.tokens * topk * w * dispatch_e * remote;
  o.combine_bytes = o.tokens * topk * w * e * remote;
  o.dispatch_bytes_busiest = received * w * dispatch_e * remote;
  o.etp_gather_bytes = x.etp > 1 ? o.routed_tokens * w * e : 0.0;
  return o;
}

}  // namespace clustersim::models
