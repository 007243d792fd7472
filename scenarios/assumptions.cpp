#include "scenarios/assumptions.hpp"

#include <fmt/format.h>

#include <functional>

#include "hardware/kernel_cost.hpp"
#include "models/layer_ops_host.hpp"
#include "models/layer_passes.hpp"
#include "models/moe_ops.hpp"
#include "scenarios/load_recipe.hpp"

namespace clustersim::scenarios {
namespace {

using OpFilter = std::function<bool(const models::KernelOp&)>;

// Seconds per step of the ops `keep` selects on one GPU, counted as the explainer's roofline
// does: block passes × layers per stage × micro-batches, head and embedding spread over stages.
double seconds_per_step(const Report& r, const OpFilter& keep) {
  const double mbs = r.step.micro_batches;
  const double per_stage = mbs / r.scenario.parallel.pp;
  double s = 0;
  auto add = [&](const models::PassCost& pass, double calls) {
    for (const auto& op : pass.ops)
      if (keep(op)) s += op.time_s * calls;
  };
  const auto& c = r.costs;
  const auto& sc = r.scenario;
  for (bool backward : {false, true})  // each block as it runs (dense, MoE, MLA)
    for (const auto& lp : models::layer_passes(sc.model, sc.training, sc.parallel, sc.gpu, c, backward))
      add(lp.pass, lp.layers / sc.parallel.pp * mbs);
  for (const auto& lp : models::recompute_passes(sc.model, sc.training, sc.parallel, sc.gpu, c))
    add(lp.pass, lp.layers / sc.parallel.pp * mbs * c.recompute_share);
  for (const auto* pass : {&c.embed_fwd, &c.embed_bwd, &c.head_fwd, &c.head_bwd}) add(*pass, per_stage);
  return s;
}

double kernels_per_step(const Report& r) {
  const double mbs = r.step.micro_batches;
  double n = 0;
  const auto& c = r.costs;
  const auto& sc = r.scenario;
  for (bool backward : {false, true})
    for (const auto& lp : models::layer_passes(sc.model, sc.training, sc.parallel, sc.gpu, c, backward))
      for (const auto& op : lp.pass.ops) n += op.kernels * lp.layers / sc.parallel.pp * mbs;
  for (const auto& lp : models::recompute_passes(sc.model, sc.training, sc.parallel, sc.gpu, c))
    for (const auto& op : lp.pass.ops) n += op.kernels * lp.layers / sc.parallel.pp * mbs * c.recompute_share;
  return n;
}

std::string share(const Report& r, double seconds) {
  return fmt::format("{:.1f} % of the step ({:.3g} s)", 100 * seconds / r.step_time_s, seconds);
}

// MoE blocks wait for the host inside the block program (models/moe_block_host.cpp), not as an op
// the kernel tables count: say where that time shows.
std::string moe_host_note(const Report& r) {
  const auto& t = r.scenario.training;
  if (!r.scenario.model.is_moe() || r.scenario.parallel.ep <= 1 || t.cuda_graphs) return "";
  const double call = models::moe_dispatch_call_s(r.scenario.gpu, t.moe_dispatcher);
  return fmt::format(
      " in dense launches; each MoE layer's forward also waits at its tokens-per-expert sync, then "
      "for the {} dispatch call's {:.3g} ms of CPU{} (the waterfall's host line)",
      models::name(t.moe_dispatcher), 1e3 * call,
      t.moe_dispatcher == models::MoeDispatcher::allgather
          ? ""
          : " (Megatron-Bridge's Nsight profile of the HybridEP call on a DGX H100, scaled to this host)");
}

bool ends_with(const std::string& s, const char* tail) {
  const std::string t(tail);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

// The MoE keys whose defaults move the answer most: the dispatcher, the routing balance and the
// all-to-all overlap (docs/moe.md).
void add_moe_routing(const Report& r, std::vector<Assumption>* out) {
  const auto& sc = r.scenario;
  const auto& t = sc.training;
  const auto& p = sc.parallel;
  if (t.assumed.moe_dispatcher)
    out->push_back({"training.moe_dispatcher", models::name(t.moe_dispatcher),
                    "the all-to-all dispatcher Megatron-LM's MoE recipes set (--moe-token-dispatcher-type alltoall; "
                    "Megatron-Core's own default is allgather); deepep moves tokens with DeepEP-style kernels"});
  if (t.assumed.moe_load_imbalance && p.ep > 1) {
    const double busiest =
        models::moe_layer_ops(sc.model, t, p, models::expert_parallel(p), sc.gpu, t.moe_load_imbalance).load_imbalance;
    out->push_back(
        {"training.moe_load_imbalance", "auto",
         fmt::format("the sampling floor of balanced routing (docs/moe.md): the busiest EP rank gets {:.3f}x the "
                     "mean tokens; Megatron's forced-balance benchmarks route so (random router logits), trained "
                     "routers add skew (give the measured share; routers trained with an auxiliary loss "
                     "measured 1.5-1.6, docs/moe.md), 1.0 is an exactly even gate",
                     busiest)});
  }
  if (t.assumed.moe_a2a_overlap && p.ep > 1 && p.v_shape())
    out->push_back({"training.moe_a2a_overlap", "true",
                    fmt::format("DualPipeV's forward/backward pairs run one micro-batch's dispatch/combine against another's "
                                "compute (DeepSeek-V3 report §3.2.1); exposed EP communication is {}",
                                share(r, r.step.breakdown.comm_exposed[models::Channel::ep]))});
  else if (t.assumed.moe_a2a_overlap && p.ep > 1)
    out->push_back({"training.moe_a2a_overlap", t.moe_a2a_overlap ? "true" : "false",
                    fmt::format("Megatron-Core's default (--overlap-moe-expert-parallel-comm off): dispatch/combine wait "
                                "for compute; exposed EP communication is {}", share(r, r.step.breakdown.comm_exposed[models::Channel::ep]))});
}

// Where the ranks sit: the rank order and, on NVL72 racks, the GPUs of each rack the job gets.
void add_placement(const Report& r, std::vector<Assumption>* out) {
  const auto& sc = r.scenario;
  if (sc.network.placement_assumed && sc.parallel.pp > 1)
    out->push_back({"network.placement", "[tp, cp, dp, pp]",
                    "Megatron-Core's rank order tp-cp-ep-dp-pp (parallel_state.py initialize_model_parallel) and "
                    "torchtitan's mesh: a stage's DP and EP ranks adjacent, the pipeline outermost"});
  if (sc.sequence_parallel_assumed)
    out->push_back({"parallelism.sequence_parallel", "true",
                    "an MoE model with tensor parallelism: Megatron requires it (TransformerConfig), each TP rank "
                    "routes its own slice of the sequence"});
  if (sc.pp_comm_overlap_assumed)
    out->push_back({"parallelism.pp_comm_overlap", sc.parallel.pp_comm_overlap ? "true" : "false",
                    fmt::format("Megatron-LM's default (--overlap-p2p-communication, on for the interleaved schedule only); "
                                "exposed pipeline sends are {}", share(r, r.step.breakdown.comm_exposed[models::Channel::pp]))});
  if (sc.cluster.segment_assumed)
    out->push_back({"cluster.gpus_per_node", fmt::format("{}", sc.cluster.gpus_per_node),
                    fmt::format("{} GPUs per NVLink rack: SLURM --segment of {} 4-GPU trays, the largest divisor of the "
                                "job's {} trays that fits a rack (Megatron-Bridge scripts/performance/utils/executors.py)",
                                sc.cluster.gpus_per_node, sc.cluster.gpus_per_node / 4, sc.cluster.gpus / 4)});
}

// ZeRO-2/3 under pipeline parallelism: the memory the report gives, and why it equals ZeRO-1's
// gradients (issue 31 item 3). PyTorch's pipelining schedules run every micro-batch but the last
// under no_sync, so FSDP holds unsharded gradients until the last backward, and torchtitan keeps
// the gathered parameters across micro-batches with pp (reshard_after_forward off, models/
// training_spec.hpp keeps_gathered_params); Megatron offers no ZeRO-2/3 with pp at all.
void add_sharding(const Report& r, std::vector<Assumption>* out) {
  const auto& p = r.scenario.parallel;
  if (p.pp <= 1 || p.zero_stage < 2 || p.dp * p.cp <= 1) return;
  out->push_back({"parallelism.zero_stage", fmt::format("{} with pp {}", p.zero_stage, p.pp),
                  p.keeps_gathered_params() || p.zero_stage == 2
                      ? "under pipeline parallelism gradients stay unsharded until the last micro-batch (PyTorch "
                        "pipelining runs the others under no_sync) and gathered parameters are kept across micro-batches "
                        "(torchtitan: no reshard after forward with pp), so memory equals ZeRO-1's; only the optimizer "
                        "state is sharded"
                      : "under pipeline parallelism gradients stay unsharded until the last micro-batch (PyTorch "
                        "pipelining runs the others under no_sync); parameters are resharded after each forward"});
}

}  // namespace

void add_offload(const Report& r, std::vector<Assumption>* out) {
  const auto& t = r.scenario.training;
  if (t.activation_offload_layers <= 0) return;
  const auto& top = r.scenario.network.topology;
  const bool c2c = top.host_link_bandwidth.si() > 0;
  const double link = c2c ? top.host_link_bandwidth.si() : top.pcie_bandwidth.si();
  out->push_back({"network.node.host_link_bandwidth",
                  fmt::format("{:.0f} GB/s x {:.2f}", link / 1e9, top.pcie_efficiency),
                  fmt::format("training.activation_offload_layers = {}: their activations cross the GPU's {} per "
                              "direction at the PCIe copy-engine efficiency (hardware.md §2.2); a copy beyond the "
                              "neighbouring block's pass is exposed (counted as host overhead)",
                              t.activation_offload_layers, c2c ? "NVLink-C2C share" : "PCIe x16 link")});
}

// The loss kernel, always stated: its FP32 copy of the logits is a large transient on the last
// stage at big vocabularies.
void add_loss(const Report& r, std::vector<Assumption>* out) {
  const bool fp32 = r.scenario.training.cross_entropy == models::CrossEntropy::fp32;
  const double s =
      seconds_per_step(r, [](const models::KernelOp& op) { return op.name.rfind("cross_entropy", 0) == 0; });
  out->push_back(
      {"training.cross_entropy", fp32 ? "fp32" : "fused",
       fmt::format("{}; the loss kernels are {}",
                   fp32 ? "the loss on an FP32 copy of the logits (torchtitan; Megatron-Core unfused or with its "
                          "native fusion), 4 B more per logit at the loss; fused (flash-attn's xentropy in "
                          "llm-foundry, Megatron --cross-entropy-fusion-impl te) reads the BF16 logits only"
                        : "one kernel on the logits in their own dtype (flash-attn's xentropy, Transformer "
                          "Engine's parallel_cross_entropy), no FP32 copy",
                   share(r, s))});
}

// The low-precision recipe's defaults: scaling recipe, auto-filter, FP8 attention, BF16 blocks.
void add_low_precision(const Report& r, std::vector<Assumption>* out) {
  const auto& t = r.scenario.training;
  if (!hardware::is_low_precision(t.precision)) return;
  const double q = seconds_per_step(r, [](const models::KernelOp& op) {
    return ends_with(op.name, "quantize") || ends_with(op.name, "quantize_fp8");
  });
  if (t.precision == hardware::Precision::fp8 && t.assumed.fp8_recipe)
    out->push_back({"training.fp8_recipe", models::name(t.fp8_recipe),
                    fmt::format("Megatron-LM's default --fp8-recipe (Transformer Engine DelayedScaling); "
                                "quantization kernels are {}",
                                share(r, q))});
  if (t.assumed.fp8_auto_filter)
    out->push_back(
        {"training.fp8_auto_filter", "false",
         "every block linear in low precision, as Megatron/TE do (torchao's auto-filter would keep small ones "
         "in BF16); the LM head stays BF16"});
  if (!t.fp8_attention)
    out->push_back({"training.fp8_attention", "false", "attention in BF16, as TE and torchao recipes default"});
  if (!t.bf16_layers.any())
    out->push_back({"training.bf16_layers", "none",
                    fmt::format("every block's linears in {} (Megatron-Core's default: --first-last-layers-bf16 off); "
                                "NVIDIA's NVFP4 recipes keep the last blocks in BF16 (Megatron-Bridge: Nemotron 3 "
                                "Super the last 14, GPT-OSS 20B the last 4)",
                                upper_name(t.precision))});
}

// The SwiGLU input's storage (memory only), for SwiGLU models.
void add_swiglu_store(const Report& r, std::vector<Assumption>* out) {
  if (r.scenario.model.activation != models::Activation::swiglu || r.scenario.training.activation_fp8_input_store)
    return;
  out->push_back({"training.activation_fp8_input_store", "false",
                  "SwiGLU inputs saved for backward in the activation dtype (Megatron-Core's default); true keeps "
                  "them in FP8, as DeepSeek-V3 trained (less memory, a cast each way)"});
}

std::vector<Assumption> assumptions(const Report& r) {
  const auto& t = r.scenario.training;
  const auto& gpu = r.scenario.gpu;
  std::vector<Assumption> out;
  add_placement(r, &out);
  add_sharding(r, &out);
  if (t.precision != hardware::Precision::fp32 && t.precision != hardware::Precision::tf32)
    out.push_back({"training.optimizer_dtype", t.fp32_optimizer_state ? "fp32" : "bf16",
                   t.fp32_optimizer_state
                       ? "fp32 master weights and Adam moments, 12 B per parameter (Megatron, torchtitan and mixed-precision "
                         "PyTorch); bf16 would keep BF16 moments and no master (NeMo AutoModel's default), 4 B"
                       : "BF16 Adam moments and no fp32 master (NeMo AutoModel's default: the model is built in "
                         "torch.bfloat16), 4 B per parameter instead of 12; gradients kept in BF16"});
  add_offload(r, &out);
  add_loss(r, &out);
  if (t.assumed.attention_impl) {
    const double s = seconds_per_step(r, [](const models::KernelOp& op) { return op.kind == models::OpKind::attention; });
    out.push_back({"training.attention_impl", hardware::name(t.attention_impl),
                   fmt::format("the {} profile's default (what current stacks run there); attention kernels are {}",
                               gpu.name, share(r, s))});
  }
  add_low_precision(r, &out);
  add_swiglu_store(r, &out);
  if (t.assumed.cuda_graphs) {
    const double gaps = kernels_per_step(r) * models::kernel_gap_s(gpu, t);
    out.push_back({"training.cuda_graphs", t.cuda_graphs ? "true" : "false",
                   fmt::format("Megatron-LM and torchtitan default (no graph capture); GPU-side launch gaps "
                               "({:.2g} us per kernel, hardware.md §3.10) are {}",
                               1e6 * models::kernel_gap_s(gpu, t), share(r, gaps))});
  }
  if (r.scenario.model.is_moe()) {
    add_moe_routing(r, &out);
    if (t.assumed.moe_router_fusion)
      out.push_back({"training.moe_router_fusion", "false",
                     "Megatron-Core's default (--moe-router-fusion off): the router part launches 72 kernels per MoE layer "
                     "forward (31 fused; Megatron-LM guide 'DeepSeek-V3 on GB200' §2.1.4), at the host launch cost below"});
    if (t.assumed.moe_permute_fusion)
      out.push_back({"training.moe_permute_fusion", "false",
                     "Megatron-Core's default (--moe-permute-fusion off): PyTorch permute/unpermute, whose masked_select "
                     "syncs the host (docs/moe.md)"});
    if (t.assumed.moe_dispatcher_sms && models::uses_ep_kernels(t.moe_dispatcher) && r.scenario.parallel.ep > 1)
      out.push_back(
          {"training.moe_dispatcher_sms", std::to_string(t.moe_dispatcher_sms),
           "SMs the DeepEP / HybridEP kernels hold while an exchange runs, taken from the compute beside them, and "
           "that set their rate within an NVLink domain (hardware/kernels/ep_kernels.csv); Megatron-Core's "
           "moe_flex_dispatcher_num_sms unset: DeepEP's historical 20, HybridEP's own 32 (DeepEP "
           "hybrid_ep_buffer.py)"});
    if (t.assumed.moe_grouped_gemm && hardware::is_low_precision(t.precision))
      out.push_back({"training.moe_grouped_gemm", "cutlass",
                     "the experts' grouped GEMMs as Transformer Engine's GroupedLinear and torch._scaled_grouped_mm run "
                     "them, at 0.77 of the dense low-precision GEMM's efficiency (8 kernel rows, hardware/kernel_cost.cpp); "
                     "deepgemm (DeepSeek's kernel: Hopper, FP8 blockwise) runs them at the dense efficiency"});
  }
  const double wait = seconds_per_step(r, [](const models::KernelOp& op) { return op.name == "host_launch_wait"; });
  // The profile's key, so `--set hardware.host_launch=20us` (or a hardware map with `base:`) changes it.
  out.push_back(
      {"hardware.host_launch", fmt::format("{:.1f} us per op", 1e6 * models::host_launch_s(gpu)),
       fmt::format(
           "CPU time to issue one op from PyTorch on this node's host CPU (torch.nn.Linear forward, "
           "TransformerEngine #2053: 13.5 us on a DGX H100's Xeon, 37.1 us on GB200's Grace; "
           "a GEMM or attention kernel is a Transformer Engine module call, 2.7 times that (TE Linear over "
           "torch Linear on GB200 and GH200); hardware/kernels/host_op_cost.csv); the GPU waits for the host {}{}; "
           "each step also spends {:.3g} s on the gradient-norm pass for clipping and two host syncs (clipping, "
           "loss logging), their scalar all-reduces costed on the network",
           share(r, wait), moe_host_note(r), r.costs.step_fixed.time_s)});
  return out;
}

}  // namespace clustersim::scenarios
