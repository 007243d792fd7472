#pragma once
// The kernels of one Transformer block (and of the embedding / LM head) for one micro-batch on
// one rank, with FLOP and bytes from the shapes, costed on a GPU by roofline.
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
};

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

struct StepCosts {
  PassCost layer_fwd, layer_bwd, layer_recompute;  ///< per block per micro-batch
  PassCost head_fwd, head_bwd;      ///< final norm, LM head GEMM, cross-entropy
  PassCost embed_fwd, embed_bwd;    ///< token (+ position) embedding
  double layer_params = 0;          ///< parameters of one block held on this rank
};

/// Kernel costs for one micro-batch of `micro_batch` sequences of seq_len/cp tokens on a rank
/// holding 1/tp of each block.
StepCosts step_costs(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                     const hardware::GpuSpec& gpu);

}  // namespace clustersim::models
