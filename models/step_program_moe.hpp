#pragma once
// The block program of a heterogeneous stack: per layer kind (attention: standard, MLA or
// sliding-window; MLP: dense or MoE) one UnitProgram, the MoE block's dispatch / combine
// all-to-alls over the EP group of the scenario's network, and the MTP modules appended to the
// LM head on the last stage. A dense model gets dense_block_program() unchanged.
#include "hardware/gpu_spec.hpp"
#include "models/mamba_ops.hpp"
#include "models/mla_ops.hpp"
#include "models/model_spec.hpp"
#include "models/moe_exchanges.hpp"
#include "models/moe_ops.hpp"
#include "models/step_program.hpp"

namespace clustersim::models {

/// The step's block program for `m` (dense_block_program() when m has no MoE, MLA,
/// sliding-window layer or MTP module).
BlockProgram block_program(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                           const hardware::GpuSpec& gpu, const StepCosts& c, const topologies::Network& net);

/// The GPU time an MoE block pass loses to the host (models/moe_host.hpp): the block's kernels
/// in issue order (attention or MLA, shared experts, router, dispatcher preprocess, permute,
/// exchanges, experts, unpermute), captured parts (training.cuda_graph_scope) as one graph
/// replay each, issued at host_launch_s() with the dispatcher's tokens-per-expert sync in the
/// forward; plus the GPU time of the small kernels counted there beyond the modelled ops (each
/// the profile's kernel gap). 0 under full-iteration CUDA graphs or ideal.host.
struct BlockHostWait {
  double fwd = 0, bwd = 0;
};
/// A block's recurrent mixer (Mamba or linear attention) and the graph scope that captures it;
/// ops null for an attention (or no) mixer.
struct BlockMixer {
  const MambaOps* ops = nullptr;
  GraphScope scope = GraphScope::attn;
};
/// `parts`: the block's compute by part without any host wait (parts_of for an MoE block).
BlockHostWait moe_host_waits(const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu,
                             const StepCosts& c, const BlockParts& parts, const MlaOps* mla,
                             const BlockMixer& recurrent, const MoeLayerOps& ops, const TpComms& tp,
                             const RoutedExchanges& x);

/// The routed-expert items of one MoE block (router, permute, dispatch, grouped experts, combine,
/// unpermute; backward in reverse), for `ops` of the same layer, with the block's host waits.
/// `parts`: the block's compute by part, which covers the exchanges under moe_a2a_overlap.
RoutedProgram routed_program(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const MoeLayerOps& ops,
                             const RoutedExchanges& x, const BlockHostWait& host, const BlockParts& parts);

}  // namespace clustersim::models
