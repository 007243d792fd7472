#pragma once
// Model FLOPs per token — the MFU numerator — under the common published definitions.
#include "models/model_spec.hpp"
#include "models/training_spec.hpp"

namespace clustersim::models {

struct FlopsPerToken {
  double model = 0;      ///< by the selected formula; excludes recompute
  double hardware = 0;   ///< model + recomputed forward work (HFU numerator)
  const char* formula = "";
};

/// megatron: 6·N_matmul + 12·L·s·h_q (fwd+bwd of every matmul weight, LM head included, plus
///   QKᵀ and A·V over the full s² — Narayanan et al. 2021 eq. 3, generalized to GQA/SwiGLU by
///   counting weights; equals 72·L·h²·(1 + s/6h + V/12hL) for GPT with ffn = 4h).
/// palm: 6·N_non-embedding + 12·L·h·s (Chowdhery et al. 2022, appendix B).
/// Recompute adds one forward of the recomputed part: full = (2·N_layers + 4·L·s·h_q),
/// selective = 4·L·s·h_q (attention core only; Korthikanti et al. 2022).
FlopsPerToken flops_per_token(const ModelSpec& m, const TrainingSpec& t);

}  // namespace clustersim::models
