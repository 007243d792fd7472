#pragma once
// The attention of one DeepSeek-V4 block (models::CompressedAttentionSpec) for one micro-batch on
// one rank, by the layer's compress ratio, and the block's hyper-connections
// (models::HyperConnections). Sources and what is assumed: docs/reference/deepseek_v4.md.
#include <array>

#include "hardware/gpu_spec.hpp"
#include "models/mla_ops.hpp"
#include "models/model_spec.hpp"
#include "models/training_spec.hpp"

namespace clustersim::models {

/// The layer's projections (wq_a, q_norm, wq_b, the per-head query norm, wkv, kv_norm, RoPE),
/// compressor and indexer (CSA), the core over window and compressed keys, the inverse RoPE of
/// the output and the grouped low-rank output (wo_a in BF16, wo_b); and the block's two mHC
/// sites. Saved bytes as MlaOps counts them; recompute of mla_up_proj drops the query heads and
/// the key/value.
MlaOps compressed_attention_ops(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                const hardware::GpuSpec& gpu, int ratio);

/// The attention ops of each kind of layer a DeepSeek-V4 stack has (window only, CSA, HCA),
/// each built once; `of(layer)` the ops of a layer of the main stack or an MTP module.
struct CompressedAttentionKinds {
  std::array<MlaOps, kCompressedKinds> ops;  ///< by CompressedKind (empty for a kind the stack lacks)
  const MlaOps& of(const ModelSpec& m, int layer) const {
    return ops[static_cast<std::size_t>(m.compressed_attention.kind_of(layer))];
  }
};
CompressedAttentionKinds compressed_attention_kinds(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                                    const hardware::GpuSpec& gpu);

}  // namespace clustersim::models
