#pragma once
// DeepSeek Sparse Attention (models::SparseAttentionSpec) in an MLA block: the lightning indexer
// and the sparse attention core over the selected keys, for one micro-batch on one rank, in
// place of MLA's dense core. Sources and what is assumed: docs/reference/dsa.md.
#include "hardware/gpu_spec.hpp"
#include "models/mla_ops.hpp"
#include "models/model_spec.hpp"
#include "models/training_spec.hpp"

namespace clustersim::models {

/// Mean keys one query attends to under DSA at sequence length s with causal masking: every
/// earlier token while there are fewer than top_k, then top_k: k − k²/(2s) for s > k.
double dsa_mean_keys(double s, double top_k);

/// Appends the indexer (its projections, duplicated on every TP rank as DeepSeek's reference
/// implementation keeps them whole; the FP8 score GEMM; the top-k selection; the backward of its
/// KL-trained scores) and the sparse MQA-mode core to `o`, sets o->attention_flop_fwd to the
/// core's, and adds what they keep for backward (the selected indices, the indexer's FP8 q and k
/// and its head weights) to o->saved_bytes.
void add_dsa_core(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu, MlaOps* o);

}  // namespace clustersim::models
