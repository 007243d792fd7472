#pragma once
// moe_a2a_overlap: Megatron-Core's EP all-to-all overlap (--overlap-moe-expert-parallel-comm)
// runs a forward layer together with another micro-batch's backward layer and puts each exchange
// on the communication stream beside one compute piece of the other pass
// (models/common/model_chunk_schedule_plan.py, TransformerLayerSchedulePlan.run):
//   combine backward  | attention, pre-MLP norm and router forward ("pre_dispatch_fwd");
//   dispatch forward  | the experts' dgrad ("mlp_bwd");
//   dispatch backward | the experts' wgrad and forward ("mlp_bwd_dw", "mlp_fwd");
//   combine forward   | attention, pre-MLP norm and router backward ("pre_dispatch_bwd").
#include "models/layer_ops.hpp"
#include "models/moe_ops.hpp"
#include "models/step_program.hpp"

namespace clustersim::models {

/// The seconds of the other pass's compute that cover each exchange of one MoE block.
struct ExchangeCover {
  double dispatch = 0, combine = 0, combine_grad = 0, dispatch_grad = 0;
};

ExchangeCover exchange_cover(const MoeLayerOps& o, const BlockParts& parts);

}  // namespace clustersim::models
