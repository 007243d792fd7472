#pragma once
// The kernels of one Mamba mixer (models::MambaSpec; Mamba-2 here, Mamba-1 in mamba1_ops.cpp) for one micro-batch on one rank, as data
// for the step builder: in_proj and conv1d (the block's `qkv` part), the chunked SSD scan and
// its gated norm (`core`), out_proj (`attn_out`). Megatron-Core MambaMixer with TP: in_proj
// column-parallel and out_proj row-parallel over heads (heads, groups and the inner width split
// over tp), conv1d, scan and norm on the rank's own heads; the TP collectives are the
// attention's (step_program.cpp).
#include "hardware/gpu_spec.hpp"
#include "models/layer_ops.hpp"
#include "models/model_spec.hpp"
#include "models/training_spec.hpp"

namespace clustersim::models {

struct MambaOps {
  PassCost in_fwd, in_bwd;      ///< in_proj, conv1d (+ SiLU)
  PassCost core_fwd, core_bwd;  ///< SSD scan kernels, gated RMSNorm
  PassCost out_fwd, out_bwd;    ///< out_proj
  double scan_flop_fwd = 0;     ///< the SSD scan alone (models::ssd_flop_per_token × tokens)
  /// Bytes the mixer keeps for backward per micro-batch beyond the block input: in_proj input,
  /// z, dt and the conv input, the conv output (x, B, C: the scan's inputs), the scan output, the
  /// norm output (out_proj input). The chunk states are rebuilt in backward (mamba_ssm
  /// mamba_chunk_scan_combined saves none), so they are workspace, not held.
  double saved_bytes = 0;
  /// The fp32 chunk states one scan writes and reads ([b, s/Q, heads, head_dim, state]).
  double state_bytes = 0;
};

/// One Mamba mixer of `m` under `t` and `p` (tokens b·s/cp; heads/tp on this rank): Mamba-2's
/// SSD kernels, or mamba1_mixer_ops for a Mamba-1 model.
MambaOps mamba_mixer_ops(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu);
/// One Mamba-1 mixer (models/mamba1_ops.cpp): in_proj, conv1d, x_proj with the dt/B/C norms,
/// dt_proj and the selective scan (`core`), out_proj. The chunk states of `state_bytes` are the
/// scan's saved per-chunk states.
MambaOps mamba1_mixer_ops(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu);

}  // namespace clustersim::models
