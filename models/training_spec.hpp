#pragma once
// How the model is trained: parallel layout, batch, precision, recompute.
#include <array>
#include <string>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "topologies/placement.hpp"

namespace clustersim::models {

enum class Recompute { none, selective, full };
enum class FlopsFormula { megatron, palm };
enum class PipelineSchedule { one_f_one_b, gpipe, interleaved };

/// Rank placement (Megatron order): TP innermost, then CP, then PP, then DP.
/// ZeRO-3 / FSDP: whether a block's gathered parameters are freed after its forward (and
/// gathered again for its backward and for every micro-batch). automatic: yes unless pp > 1,
/// torchtitan's default ("for PP, do not reshard after forward to avoid per-microbatch
/// all-gathers").
enum class FsdpReshard { automatic, always, never };

struct ParallelSpec {
  int tp = 1;
  int pp = 1;
  int cp = 1;
  int dp = 1;
  /// 0: gradient all-reduce; 1: optimizer states sharded over DP×CP (distributed optimizer);
  /// 2: gradients sharded too (reduce-scattered every micro-batch; with pp > 1 in the last
  /// micro-batch only, as PyTorch pipelining does); 3 (≡ FSDP): parameters sharded too,
  /// all-gathered per block (see fsdp_reshard_after_forward).
  int zero_stage = 0;
  int vpp = 1;                       ///< virtual pipeline stages (model chunks) per rank
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  /// Layers per virtual stage (pp·vpp entries, in pipeline order); empty: an even split.
  std::vector<int> pp_layers;
  bool sequence_parallel = false;    ///< Megatron SP: reduce-scatter/all-gather, sharded norms
  bool tp_comm_overlap = false;      ///< TP collectives overlapped with the next GEMMs (TE)
  bool tp_across_nodes = false;      ///< allow tp > gpus per node
  /// Pipeline sends overlap the sender's next compute (Megatron --overlap-p2p-communication);
  /// otherwise the sender waits for its send, as batch_isend_irecv + wait does by default.
  bool pp_comm_overlap = false;
  FsdpReshard fsdp_reshard_after_forward = FsdpReshard::automatic;

  /// The group sizes as the table the network indexes by topologies::GroupDim (a new
  /// dimension: a field here, an entry in kGroupDimNames, and this line).
  std::array<int, topologies::kGroupDims> sizes() const { return {tp, cp, pp, dp}; }

  /// ZeRO-2/3 reduce-scatter gradients every micro-batch and keep only their shard; under
  /// pipelining they accumulate them unsharded and reduce-scatter in the last micro-batch, as
  /// PyTorch's pipelining does with FSDP (stage.backward_maybe_with_nosync; torchtitan).
  bool reduces_grads_every_micro_batch() const { return pp == 1; }
  /// ZeRO-3 keeps each block's gathered parameters for the whole step (see FsdpReshard).
  bool keeps_gathered_params() const {
    return fsdp_reshard_after_forward == FsdpReshard::never ||
           (fsdp_reshard_after_forward == FsdpReshard::automatic && pp > 1);
  }
};

struct TrainingSpec {
  int seq_len = 2048;
  int global_batch = 1;        ///< sequences per optimizer step
  int micro_batch = 1;         ///< sequences per micro-batch per rank
  hardware::Precision precision = hardware::Precision::bf16;
  Recompute recompute = Recompute::none;
  bool flash_attention = true;
  /// Element-wise ops fused into one kernel each (torch.compile, Transformer Engine, apex).
  /// false: eager PyTorch running the reference composite ops (see layer_ops.cpp).
  bool fused_elementwise = true;
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;  ///< ZeRO ≥ 1: parameter all-gather overlapped with forward
  /// Megatron-LM reduces gradients in fp32 when training in bf16
  /// (arguments.py: bf16 ⇒ accumulate_allreduce_grads_in_fp32).
  bool grad_reduce_fp32 = true;
  double grad_bucket_params = 0;     ///< 0: Megatron default max(4e7, 1e6·dp)
  double tokens = 0;                 ///< training budget (tokens) for days-to-train
  FlopsFormula flops_formula = FlopsFormula::megatron;
  /// What-if switches for the explainer (scenarios/explain.cpp), never read from YAML: a
  /// communication class set here costs nothing, so its share of the step can be measured.
  struct FreeComm {
    bool tp = false, cp = false, pp = false, dp = false;
  } free_comm;

  int micro_batches(const ParallelSpec& p) const { return global_batch / (micro_batch * p.dp); }
};

inline const char* name(PipelineSchedule s) {
  return s == PipelineSchedule::one_f_one_b ? "1f1b" : s == PipelineSchedule::gpipe ? "gpipe" : "interleaved";
}

inline const char* name(Recompute r) {
  return r == Recompute::none ? "none" : r == Recompute::selective ? "selective" : "full";
}

}  // namespace clustersim::models
