#include "models/detail/moe_exchange_cover.hpp"

namespace clustersim::models {

ExchangeCover exchange_cover(const MoeLayerOps& o, const BlockParts& parts) {
  double pre_fwd = o.router_fwd.time_s + o.permute_fwd.time_s / 2;
  double pre_bwd = input_grad_s(o.router_bwd) + o.permute_bwd.time_s / 2;
  for (BlockPart x : {norm_attn, qkv, core, attn_out, norm_mlp}) {
    pre_fwd += parts.fwd[static_cast<std::size_t>(x)];
    pre_bwd += parts.bwd_input[static_cast<std::size_t>(x)];
  }
  return {input_grad_s(o.experts_bwd), pre_bwd, pre_fwd, weight_grad_s(o.experts_bwd) + o.experts_fwd.time_s};
}

}  // namespace clustersim::models
