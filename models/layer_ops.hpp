#pragma once
// The kernels of one Transformer block (and of the embedding / LM head) for one micro-batch on
// one rank, with FLOP and bytes from the shapes, costed on a GPU by roofline.
#include <array>
#include <string>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "hardware/kernel_cost.hpp"
#include "models/model_spec.hpp"
#include "models/training_spec.hpp"

namespace clustersim::models {

enum class OpKind { gemm, attention, memory };
enum class Pass { forward, backward, recompute };

/// One kernel as executed: its work, traffic and modelled time.
struct KernelOp {
  std::string name;
  OpKind kind = OpKind::memory;
  double flop = 0;
  double bytes = 0;
  double time_s = 0;
  hardware::Bound bound = hardware::Bound::memory;
  int kernels = 1;  ///< launches it stands for (eager composite ops: several)
  /// Of `kernels`, those a C++ loop issues inside one framework call (Transformer Engine's
  /// per-expert quantizers): a raw launch each on the host, not a PyTorch op (host_op_units).
  int loop_launches = 0;
  const char* grounded_by = "";  ///< the data behind its rate (hardware::KernelCost)
  /// A weight-gradient GEMM (dW = Xᵀ·dY): a W-pass item when the schedule splits the backward
  /// (ParallelSpec::splits_backward), else part of the backward like every other op.
  bool weight_grad = false;
  double w_kept_elements = 0;  ///< weight_grad: elements of X and dY it reads, held from B to W
};
/// Marks `op` as the wgrad GEMM of Y[m,n] = X[m,k]·W[k,n] (reads X and dY).
inline KernelOp as_weight_grad(KernelOp op, double m, double n, double k) {
  op.weight_grad = true;
  op.w_kept_elements = m * k + m * n;
  return op;
}

/// The kernels of one pass over one block (or over the pre/post-block parts).
struct PassCost {
  std::vector<KernelOp> ops;
  double time_s = 0;
  double flop = 0;
  void add(KernelOp op) {
    time_s += op.time_s;
    flop += op.flop;
    ops.push_back(std::move(op));
  }
};

/// Seconds of the ops of `pass` that are W items (weight_grad) or are not.
double weight_grad_s(const PassCost& pass);
double input_grad_s(const PassCost& pass);
/// Elements the W items of `pass` keep alive from B to W (KernelOp::w_kept_elements).
double weight_grad_kept_elements(const PassCost& pass);

/// A block cut where tensor-parallel collectives and ring-attention steps go. A backward op
/// belongs to the part of its forward op; the wgrad GEMMs of the column-parallel inputs
/// (QKV, MLP up) are parts of their own, because Megatron overlaps the input-gradient
/// all-reduce (or reduce-scatter with SP) with them.
enum BlockPart : int {
  norm_attn,     ///< residual add of the previous block's output + pre-attention norm
  qkv,           ///< QKV projection (+ rotary); backward: dgrad
  core,          ///< attention core (with CP: the ring step over the rank's own K/V)
  attn_out,      ///< attention output projection (row-parallel)
  norm_mlp,      ///< residual add + pre-MLP norm
  mlp,           ///< MLP up/gate, activation, down (row-parallel); backward without up.wgrad
  qkv_wgrad,     ///< backward only
  mlp_up_wgrad,  ///< backward only
  kBlockParts
};

struct StepCosts {
  PassCost layer_fwd, layer_bwd, layer_recompute;  ///< per block per micro-batch
  /// Blocks whose backward runs layer_recompute, over all blocks (models::recompute_share).
  double recompute_share = 1;
  std::array<PassCost, kBlockParts> part_fwd, part_bwd;  ///< the same ops, by part
  /// With CP: one ring step of attention against K/V from another rank (cp − 1 per block).
  PassCost ring_step_fwd, ring_step_bwd;
  double kv_chunk_bytes = 0;        ///< K and V of one CP rank's sequence chunk
  /// A sliding-window layer's attention core time over a full layer's, forward and backward
  /// (hardware::windowed_attention_time_ratio; 1 when the model has no window).
  double window_time_fwd = 1, window_time_bwd = 1;
  double activation_bytes = 0;      ///< one [b, s/cp, h] tensor (TP/PP message size before SP)
  PassCost head_fwd, head_bwd;      ///< final norm, LM head GEMM, cross-entropy
  PassCost embed_fwd, embed_bwd;    ///< token (+ position) embedding
  double layer_params = 0;          ///< parameters of one block held on this rank
  /// Once per optimizer step, beside the optimizer (models/layer_ops_host.hpp).
  PassCost step_fixed;
};

/// Kernel costs for one micro-batch of `micro_batch` sequences of seq_len/cp tokens on a rank
/// holding 1/tp of each block (vocabulary padded per ModelSpec::padded_vocab). With sequence
/// parallelism the norm, residual and dropout ops work on s/tp tokens. `host_bps` is the node's
/// host-to-GPU link (the scenario topology's PCIe) for the batch upload; 0 leaves it out.
StepCosts step_costs(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                     const hardware::GpuSpec& gpu, double host_bps = 0);

}  // namespace clustersim::models
