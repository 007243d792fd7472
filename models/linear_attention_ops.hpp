#pragma once
// The kernels of one linear-attention mixer (models::LinearAttentionSpec: gated DeltaNet or KDA)
// for one micro-batch on one rank, in the shape of a Mamba mixer's (models::MambaOps): the input
// projections and short convs (`qkv` part), the chunked gated-delta-rule kernels and the gated
// norm (`core`), the output projection (`attn_out`). TP as Megatron-Core's GatedDeltaNet: the
// projections column- and row-parallel over heads, the scan on the rank's heads, the TP
// collectives the attention's. Sources and rates: docs/reference/linear_attention.md.
#include "hardware/gpu_spec.hpp"
#include "models/mamba_ops.hpp"
#include "models/model_spec.hpp"
#include "models/training_spec.hpp"

namespace clustersim::models {

/// One linear-attention mixer of `m` under `t` and `p` (tokens b·s/cp; heads/tp on this rank).
/// scan_flop_fwd: the chunked scan alone (models::delta_rule_flop_per_token × tokens);
/// saved_bytes: what the mixer keeps for backward beyond the block input; state_bytes: the
/// per-chunk states the forward writes (recomputed in backward, as fla does).
MambaOps linear_attention_ops(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu);

}  // namespace clustersim::models
