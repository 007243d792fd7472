#include "models/detail/moe_memory.hpp"

namespace clustersim::models {

MoeMemory moe_memory(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const ExpertParallel& x,
                     int moe_layers, const MoeLayerOps& ops) {
  const bool fp32_weights = t.precision == hardware::Precision::fp32 || t.precision == hardware::Precision::tf32;
  const double wb = fp32_weights ? 4.0 : 2.0;
  const double gb = fp32_weights ? 4.0 : (t.grad_reduce_fp32 && t.fp32_optimizer_state) ? 4.0 : 2.0;
  const double ob = t.optimizer_bytes_per_param(fp32_weights);
  const int zero = x.edp > 1 ? p.zero_stage : 0;
  const double edp = x.edp;
  MoeMemory r;
  // The dense parameters' rule (models/memory.cpp, the step model's ShardingPolicy): under
  // pipelining ZeRO-2/3 accumulate unsharded gradients until the last micro-batch, and ZeRO-3
  // keeps the gathered parameters for the step (torchtitan's reshard_after_forward = not pp).
  r.weights_sharded = zero >= 3 && !p.keeps_gathered_params();
  r.gradients_sharded = zero >= 2 && p.reduces_grads_every_micro_batch();
  r.expert_params = double(moe_layers) * ops.local_experts * expert_params(m) / x.etp;
  // PyTorch FSDP keeps the fp32 shard (the optimizer's master) as the parameter, over any EDP
  // size, 1 included: the BF16 weights are only the layers gathered at a time (models/memory.cpp).
  const bool fsdp = p.zero_stage >= 3 && !p.keeps_gathered_params();
  // Without an fp32 master, the shard is the BF16 parameter itself.
  const double shard = zero >= 3 ? edp : 1.0;
  r.expert_weights_bytes = !fsdp ? r.expert_params * wb : t.fp32_optimizer_state || fp32_weights ? 0.0 : r.expert_params * wb / shard;
  r.expert_gradients_bytes = r.expert_params * gb / (r.gradients_sharded ? edp : 1.0);
  // Sharded states are gathered layer by layer: the layer at work and the one prefetched hold
  // their experts' full weights (and, in backward, full gradients before the reduce-scatter),
  // as the dense accounting's two gathered blocks.
  const double layer_params = ops.local_experts * expert_params(m) / x.etp;
  r.gathered_weight_bytes = fsdp ? 2 * layer_params * wb : 0.0;
  r.gathered_gradient_bytes = r.gradients_sharded ? 2 * layer_params * gb : 0.0;
  r.expert_optimizer_bytes = r.expert_params * ob / (zero >= 1 ? edp : 1.0);

  // Saved for backward, per layer: fp32 router probabilities [T, E]; on the busiest rank the
  // permuted expert inputs (fc1 input), fc1 output (gate and up when gated) and activation
  // output (fc2 input) at ffn/etp; the shared experts' fc1 output and activation output.
  // Megatron-Core multiplies the routing probabilities inside the experts' activation
  // (experts.py, activation_func_with_probs: act(fc1 out) * probs, the fc2 input), so their
  // gradient comes from the saved fc1 output and the unpermute only sums: the experts' [tokens, h]
  // outputs are not kept.
  // fc1 and fc2 keep their inputs as quantized copies in FP8/MXFP8 (Transformer Engine; see
  // TrainingSpec::saved_linear_input_bytes), the fc1 output stays BF16 for the activation's backward
  // (FP8 under training.activation_fp8_input_store: fc1_output_saved_bytes).
  const double e = hardware::storage_bytes(t.precision), h = m.hidden, in = t.saved_linear_input_bytes();
  const double width = double(m.moe.expert_ffn_hidden) / x.etp;
  double a = ops.tokens * m.moe.experts * 4.0;
  const double w = m.expert_width();  // latent MoE: the experts' input width
  a += ops.routed_tokens * ((w + width) * in + fc1_output_saved_bytes(m, t, width));
  if (m.moe.latent_dim > 0) a += ops.tokens * w * e;  // the up projection's input (the down one reads the router's)
  if (m.moe.shared_experts > 0) {
    const double seq_tokens = double(t.micro_batch) * t.seq_len / p.cp;
    const double shared = double(m.moe.shared_experts) * m.moe.expert_ffn_hidden / p.tp;
    a += seq_tokens * (fc1_output_saved_bytes(m, t, shared) + shared * in);
    if (in != e) a += ops.tokens * h * in;  // the shared fc1's quantized input (the router keeps the BF16 one)
  }
  r.routed_activation_bytes = a;
  // The send buffer holds this rank's token copies, the receive buffer the busiest rank's.
  r.dispatch_buffer_bytes = (ops.tokens * m.moe.top_k + ops.routed_tokens / x.etp) * w * e;
  return r;
}

}  // namespace clustersim::models
