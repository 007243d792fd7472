#pragma once
// How the model is trained: parallel layout, batch, precision, recompute.
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "models/enum_names.hpp"
#include "topologies/placement.hpp"

namespace clustersim::models {

enum class Recompute { none, selective, full };
enum class FlopsFormula { megatron, palm };
/// zb_h1: ZB-H1 of Qi et al., "Zero Bubble Pipeline Parallelism" (ICLR 2024, arXiv 2401.10241
/// §2.1): 1F1B with each backward split into B (input gradients) and W (weight gradients).
enum class PipelineSchedule { one_f_one_b, gpipe, interleaved, zb_h1, dualpipev, zbv };
inline constexpr NameTable<Recompute, 3> kRecomputeNames{
    {{Recompute::none, "none"}, {Recompute::selective, "selective"}, {Recompute::full, "full"}}};
inline constexpr NameTable<FlopsFormula, 2> kFlopsFormulaNames{{{FlopsFormula::megatron, "megatron"}, {FlopsFormula::palm, "palm"}}};
/// training.cross_entropy: how the loss reads the logits. fp32: an FP32 copy for the softmax
/// (PyTorch F.cross_entropy on logits.float(), torchtitan's loss; Megatron-Core's
/// VocabParallelCrossEntropy, fused "native" impl included: calculate_logits_max calls .float()).
/// fused: one kernel on the logits in their own dtype, keeping them and a per-row log-sum-exp
/// (flash-attn's xentropy, llm-foundry's MPT loss_fn 'fused_crossentropy'; Transformer Engine's
/// parallel_cross_entropy, Megatron --cross-entropy-fusion-impl te).
enum class CrossEntropy { fp32, fused };
inline constexpr NameTable<CrossEntropy, 2> kCrossEntropyNames{
    {{CrossEntropy::fp32, "fp32"}, {CrossEntropy::fused, "fused"}}};
/// training.module_precision: the linears a quantization recipe can run in another precision
/// than the training's (Megatron-Core's quant_recipe, --te-precision-config-file: Transformer
/// Engine configs matched by module name). attention_linears: the attention mixer's QKV and
/// output projections (linear_qkv, linear_proj); moe_latent_proj: a latent MoE's down and up
/// projections (fc1/fc2_latent_proj); mamba_out_proj: the Mamba mixer's out_proj; mtp: the MTP
/// modules whole (block and projection).
enum class QuantModule { attention_linears, moe_latent_proj, mamba_out_proj, mtp };
inline constexpr NameTable<QuantModule, 4> kQuantModuleNames{{{QuantModule::attention_linears, "attention_linears"},
                                                              {QuantModule::moe_latent_proj, "moe_latent_proj"},
                                                              {QuantModule::mamba_out_proj, "mamba_out_proj"},
                                                              {QuantModule::mtp, "mtp"}}};
/// parallelism.schedule and --schedules.
inline constexpr NameTable<PipelineSchedule, 6> kPipelineScheduleNames{{{PipelineSchedule::one_f_one_b, "1f1b"},
                                                                        {PipelineSchedule::gpipe, "gpipe"},
                                                                        {PipelineSchedule::interleaved, "interleaved"},
                                                                        {PipelineSchedule::zb_h1, "zb-h1"},
                                                                        {PipelineSchedule::dualpipev, "dualpipev"},
                                                                        {PipelineSchedule::zbv, "zbv"}}};
/// How FP8 GEMM inputs get their scales (training.fp8_recipe; docs/recipes.md). delayed: from an
/// amax history (Transformer Engine DelayedScaling, Megatron's default --fp8-recipe); tensorwise:
/// current per-tensor amax (TE Float8CurrentScaling, torchao tensorwise); rowwise: per row
/// (torchao); blockwise: 1x128 activation / 128x128 weight blocks (DeepSeek-V3, TE
/// Float8BlockScaling).
enum class Fp8Recipe { tensorwise, delayed, rowwise, blockwise };
inline constexpr const char* kFp8RecipeNames[] = {"tensorwise", "delayed", "rowwise", "blockwise"};
/// training.moe_dispatcher (Megatron --moe-token-dispatcher-type; deepep and hybridep = the flex
/// dispatcher, --moe-flex-dispatcher-backend, whose DeepEP / HybridEP kernels move tokens with
/// SMs of their own, once per (token, rank) pair).
enum class MoeDispatcher { alltoall, allgather, deepep, hybridep };
inline constexpr const char* kMoeDispatcherNames[] = {"alltoall", "allgather", "deepep", "hybridep"};
/// Whether `d` runs the fused EP kernels (DeepEP or HybridEP) rather than NCCL collectives.
inline bool uses_ep_kernels(MoeDispatcher d) { return d == MoeDispatcher::deepep || d == MoeDispatcher::hybridep; }
/// training.recompute_modules, Megatron's --recompute-modules names (a bit each).
/// mhc: Megatron-Core's (dev) output-discarding checkpoint of the hyper-connection intermediates:
/// the streams between a block's two mHC sites are not kept, and the sites' forward reruns before
/// the backward.
enum class RecomputeModule { core_attn, mlp, moe, moe_act, layernorm, mla_up_proj, shared_experts, mhc };
inline constexpr const char* kRecomputeModuleNames[] = {
    "core_attn", "mlp", "moe", "moe_act", "layernorm", "mla_up_proj", "shared_experts", "mhc"};
/// training.cuda_graph_scope, Megatron's --cuda-graph-scope names (a bit each) for the partial
/// graphs of --cuda-graph-impl transformer_engine (Megatron-LM guide "DeepSeek-V3 on GB200"
/// §2.3): attn (input norm + attention), mlp (a dense layer's MLP), moe_router (pre-MLP norm,
/// router and the shared experts), moe_preprocess (the dispatcher's preprocess and first
/// permute; needs moe_router), mamba (a Mamba layer's norm and mixer; Megatron's hybrid models
/// capture their attention layers with attn). full_iteration is the whole step (TrainingSpec::cuda_graphs).
enum class GraphScope { attn, mlp, moe_router, moe_preprocess, mamba };
inline constexpr const char* kGraphScopeNames[] = {"attn", "mlp", "moe_router", "moe_preprocess", "mamba"};

/// Rank placement (Megatron order): TP innermost, then CP, then PP, then DP.
/// ZeRO-3 / FSDP: whether a block's gathered parameters are freed after its forward (and
/// gathered again for its backward and for every micro-batch). automatic: yes unless pp > 1,
/// torchtitan's default ("for PP, do not reshard after forward to avoid per-microbatch
/// all-gathers").
enum class FsdpReshard { automatic, always, never };
inline constexpr NameTable<FsdpReshard, 3> kFsdpReshardNames{
    {{FsdpReshard::automatic, "auto"}, {FsdpReshard::always, "always"}, {FsdpReshard::never, "never"}}};

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
  /// Expert parallelism folded over the attention ranks of a stage (Megatron parallel folding,
  /// arXiv 2504.14960): tp·cp·dp = etp·ep·edp. 1/1/dp·cp·tp for a dense model.
  int ep = 1;   ///< ranks the routed experts are spread over
  int etp = 1;  ///< ranks one expert's weights are split over (Megatron's default: tp)
  /// Replicas of each expert shard; expert gradients are reduced over them.
  int edp() const { return tp * cp * dp / (etp * ep); }

  /// The group sizes as the table the network indexes by topologies::GroupDim (a new
  /// dimension: a field here, an entry in kGroupDimNames, and this line).
  std::array<int, topologies::kGroupDims> sizes() const { return {tp, cp, pp, dp, ep, etp, edp()}; }

  /// ZeRO-2/3 reduce-scatter gradients every micro-batch and keep only their shard; under
  /// pipelining they accumulate them unsharded and reduce-scatter in the last micro-batch, as
  /// PyTorch's pipelining does with FSDP (stage.backward_maybe_with_nosync; torchtitan).
  bool reduces_grads_every_micro_batch() const { return pp == 1; }
  /// ZeRO-3 keeps each block's gathered parameters for the whole step (see FsdpReshard).
  /// The schedule runs each backward as a B pass and a later W pass (weight gradients).
  bool splits_backward() const { return schedule == PipelineSchedule::zb_h1 || v_shape(); }
  /// Two model chunks per rank in a V (DualPipeV, ZB-V): a micro-batch goes down the ranks
  /// through the first chunks and back up through the second ones, so rank 0 holds the first
  /// and the last virtual stages.
  bool v_shape() const { return schedule == PipelineSchedule::dualpipev || schedule == PipelineSchedule::zbv; }
  /// The virtual stage (pipeline order) of model chunk `chunk` on pipeline rank `stage`:
  /// chunk·pp + stage as Megatron interleaves, or 2·pp − 1 − stage for the V's second chunk.
  int vstage_of(int stage, int chunk) const { return v_shape() && chunk == 1 ? 2 * pp - 1 - stage : chunk * pp + stage; }
  /// The pipeline rank that runs virtual stage `vstage` (vstage_of's inverse).
  int rank_of(int vstage) const { return v_shape() && vstage >= pp ? 2 * pp - 1 - vstage : vstage % pp; }
  bool keeps_gathered_params() const {
    return fsdp_reshard_after_forward == FsdpReshard::never ||
           (fsdp_reshard_after_forward == FsdpReshard::automatic && pp > 1);
  }
};

/// Whether the block at position `index` of its model chunk reruns its whole forward under
/// `mode` with training.recompute_layers = `layers` (−1: every block of the chunk).
inline bool recomputes_block(Recompute mode, int layers, int index) {
  return mode == Recompute::full && (layers < 0 || index < layers);
}

struct TrainingSpec {
  int seq_len = 2048;
  int global_batch = 1;        ///< sequences per optimizer step
  int micro_batch = 1;         ///< sequences per micro-batch per rank
  hardware::Precision precision = hardware::Precision::bf16;
  Recompute recompute = Recompute::none;
  /// training.recompute_layers, with recompute: full: the first N blocks of each model chunk
  /// rerun their forward in the backward and keep only their input; the others keep all their
  /// activations (Megatron-LM --recompute-method block --recompute-num-layers N, counted per
  /// model chunk: TransformerBlock._checkpointed_forward). −1: every block (the default).
  int recompute_layers = -1;
  /// training.activation_offload_layers: the first N blocks copy their saved activations to
  /// host memory after their forward and back before their backward, on a copy stream
  /// (Megatron-Core --cpu-offloading --cpu-offloading-num-layers N, Transformer Engine's
  /// cpu_offload context; activations only). 0: none.
  int activation_offload_layers = 0;
  /// training.activation_fp8_input_store: a SwiGLU keeps its input (the gate and up halves of
  /// fc1's output) for backward as FP8, cast back before its backward, instead of in the
  /// activation dtype (DeepSeek-V3 report §3.3.2, "Low-Precision Storage": the MoE SwiGLU's inputs
  /// in FP8, its output recomputed; Megatron-Core --activation-func-fp8-input-store,
  /// fusions/fused_bias_swiglu.py). Dense MLPs, shared and routed experts alike.
  bool activation_fp8_input_store = false;
  /// training.bf16_layers: with a low `precision`, the first `first` and the last `last` blocks of
  /// the main stack run every linear in BF16 (Megatron-Core --first-last-layers-bf16
  /// --num-layers-at-start-in-bf16 / --num-layers-at-end-in-bf16: fp8_utils.py
  /// is_first_last_bf16_layer leaves those blocks outside Transformer Engine's FP8/FP4 autocast).
  /// MTP modules are not counted. 0 and 0: every block in `precision` (Megatron's default).
  struct Bf16Layers {
    int first = 0, last = 0;
    bool any() const { return first + last > 0; }
  } bf16_layers;
  /// training.module_precision (QuantModule above): the precision of those modules where the
  /// recipe sets one; none: the training precision.
  std::array<std::optional<hardware::Precision>, kQuantModuleNames.size()> module_precision{};
  hardware::Precision precision_of(QuantModule m) const {
    return module_precision[static_cast<std::size_t>(m)].value_or(precision);
  }
  bool overrides(QuantModule m) const { return precision_of(m) != precision; }
  /// Whether block `layer` of a stack of `layers` runs in BF16 under bf16_layers.
  bool layer_in_bf16(int layer, int layers) const {
    return hardware::is_low_precision(precision) && layer < layers &&
           (layer < bf16_layers.first || layer >= layers - bf16_layers.last);
  }
  /// false: attention materializes the score matrix (attention_impl unfused or sdpa_math);
  /// the loader keeps it consistent with attention_impl.
  bool flash_attention = true;
  /// training.attention_impl; the loader's default is the profile's default_attention_impl().
  hardware::AttentionImpl attention_impl = hardware::AttentionImpl::flash2;
  bool fp8_attention = false;              ///< attention in FP8 (cuDNN / FA3 FP8 kernels)
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;  ///< read only when precision == fp8
  /// torchao's auto-filter: small linears stay in BF16 (models/layer_ops_recipe.cpp).
  bool fp8_auto_filter = false;
  /// training.fp8_saved_inputs: a low-precision linear keeps its quantized input for the wgrad
  /// GEMM (Transformer Engine: the FP8/MXFP8 copy, 1 B per element) rather than the BF16 one
  /// (torchao Float8Linear saves input_hp). The loader defaults to false for torchao-only recipes.
  bool fp8_saves_quantized_inputs = true;
  /// Step captured as CUDA graphs (one host launch per pass, shorter GPU-side gaps).
  bool cuda_graphs = false;
  /// Partial CUDA graphs (GraphScope bits; 0: none). Captured parts launch as one graph each.
  unsigned cuda_graph_scope = 0;
  bool captures(GraphScope g) const { return !cuda_graphs && (cuda_graph_scope >> static_cast<unsigned>(g) & 1u); }
  MoeDispatcher moe_dispatcher = MoeDispatcher::alltoall;
  /// training.moe_grouped_gemm: the library of the experts' low-precision grouped GEMMs.
  hardware::GroupedGemmKernel moe_grouped_gemm = hardware::GroupedGemmKernel::cutlass;
  /// Megatron --moe-router-fusion / --moe-permute-fusion (TE fused router and permute kernels;
  /// both default off in Megatron-Core): they set the MoE block's kernel counts (models/moe_host.hpp).
  bool moe_router_fusion = false;
  bool moe_permute_fusion = false;
  /// Routed tokens on the busiest EP rank / the mean; 0 = auto (models::auto_load_imbalance).
  double moe_load_imbalance = 0;
  bool moe_a2a_overlap = false;  ///< dispatch/combine overlap another micro-batch's compute
  /// training.moe_dispatcher_sms: SMs the DeepEP / HybridEP kernels hold while an exchange runs
  /// (Megatron-Core moe_flex_dispatcher_num_sms; unset, DeepEP's historical 20 and HybridEP's own
  /// default, 32: deepseek-ai/DeepEP deep_ep/hybrid_ep_buffer.py num_sms_dispatch_api and
  /// num_sms_combine_api); NCCL's exchanges (alltoall, allgather) take the profile's comm_sms.
  int moe_dispatcher_sms = kDeepepSms;
  static constexpr int kDeepepSms = 20;
  static constexpr int kHybridepSms = 32;
  /// The SMs `d`'s kernels hold when moe_dispatcher_sms is not given.
  static constexpr int default_dispatcher_sms(MoeDispatcher d) {
    return d == MoeDispatcher::hybridep ? kHybridepSms : kDeepepSms;
  }
  unsigned recompute_modules = 0;  ///< bit i: RecomputeModule i (recompute: selective)
  bool recomputes(RecomputeModule m) const { return recompute_modules >> static_cast<unsigned>(m) & 1u; }
  /// Whether the block at position `index` of its model chunk reruns its whole forward.
  bool recomputes_block(int index) const { return models::recomputes_block(recompute, recompute_layers, index); }
  /// Blocks of a chunk of `layers` blocks that rerun their whole forward.
  int recomputed_blocks(int layers) const {
    return recompute != Recompute::full ? 0 : recompute_layers < 0 ? layers : std::min(layers, recompute_layers);
  }
  /// Keys left at their defaults, reported as assumptions (scenarios/assumptions.cpp).
  struct Assumed {
    bool attention_impl = true, fp8_recipe = true, cuda_graphs = true, fp8_auto_filter = true;
    bool moe_router_fusion = true, moe_permute_fusion = true;
    bool moe_dispatcher = true, moe_load_imbalance = true, moe_a2a_overlap = true, moe_grouped_gemm = true;
    bool moe_dispatcher_sms = true;
  } assumed;
  /// Element-wise ops fused into one kernel each (torch.compile, Transformer Engine, apex).
  /// false: eager PyTorch running the reference composite ops (see layer_ops.cpp).
  bool fused_elementwise = true;
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;  ///< ZeRO ≥ 1: parameter all-gather overlapped with forward
  /// Megatron-LM reduces gradients in fp32 when training in bf16
  /// (arguments.py: bf16 ⇒ accumulate_allreduce_grads_in_fp32).
  bool grad_reduce_fp32 = true;
  /// The optimizer keeps fp32 master weights and fp32 Adam moments (Megatron, torchtitan and
  /// mixed-precision PyTorch). false: the parameters are BF16 and Adam keeps its moments in the
  /// parameters' dtype, with no master copy (NeMo AutoModel's default: from_config builds the model
  /// in torch.bfloat16 and torch.optim.Adam's state follows it).
  bool fp32_optimizer_state = true;
  /// Optimizer-state bytes per parameter beyond the weights: fp32 master + m + v (12), m + v in
  /// fp32 when the weights are fp32 already (8), m + v in BF16 without a master (4).
  double optimizer_bytes_per_param(bool fp32_weights) const {
    return fp32_weights ? 8.0 : fp32_optimizer_state ? 12.0 : 4.0;
  }
  /// Adam's HBM traffic per local parameter. With fp32 master weights: read grad, master, m, v
  /// (16 B), write master, m, v (12 B) and the bf16 weight (2 B), plus the gradient-norm read
  /// (4 B). BF16 weights and moments without a master: read grad, weight, m, v (8 B), write
  /// weight, m, v (6 B), plus the norm's read (2 B).
  double adam_traffic_bytes_per_param() const { return fp32_optimizer_state ? 34.0 : 16.0; }
  double grad_bucket_params = 0;     ///< 0: Megatron default max(4e7, 1e6·dp)
  double tokens = 0;                 ///< training budget (tokens) for days-to-train
  /// Batch-size ramp (DeepSeek-V2/V3 reports): the global batch grows linearly in tokens from
  /// `from` sequences to global_batch over the first `tokens` tokens; days-to-train integrates
  /// the step time over it (scenarios/simulate.cpp). from == 0: no ramp.
  struct BatchRamp {
    long from = 0;
    double tokens = 0;
    bool enabled() const { return from > 0 && tokens > 0; }
  } batch_ramp;
  FlopsFormula flops_formula = FlopsFormula::megatron;
  CrossEntropy cross_entropy = CrossEntropy::fp32;  ///< training.cross_entropy (kCrossEntropyNames above)
  /// What-if switches for the explainer (scenarios/explain.cpp), never read from YAML: a
  /// communication class set here costs nothing, so its share of the step can be measured.
  struct FreeComm {
    bool tp = false, cp = false, pp = false, dp = false, ep = false;
  } free_comm;
  /// What-if switches for the explainer, never read from YAML: the selected kernels run at the
  /// GPU's peak (gemm, attention) or cost nothing (memory-bound ops, recipe quantization, host
  /// overhead), so that each loss is measured by re-simulation.
  struct Ideal {
    bool host = false, quantize = false, memory = false, attention = false, gemm = false;
    bool grouped_gemm = false;  ///< MoE grouped GEMMs at the rate of one GEMM of all their rows
  } ideal;

  int micro_batches(const ParallelSpec& p) const { return global_batch / (micro_batch * p.dp); }
  /// Bytes per element of a SwiGLU's saved input (activation_fp8_input_store above).
  double swiglu_input_bytes() const { return activation_fp8_input_store ? 1.0 : hardware::storage_bytes(precision); }
  /// Bytes per element a linear layer saves of its input for the wgrad GEMM: the quantized
  /// operand (FP8 1 B, MXFP8 1 B + its E8M0 scale per 32) when training in low precision with
  /// Transformer Engine, else the activation's storage bytes.
  double saved_linear_input_bytes() const {
    return hardware::is_low_precision(precision) && fp8_saves_quantized_inputs ? hardware::gemm_operand_bytes(precision)
                                                                                : hardware::storage_bytes(precision);
  }
  /// This training as its BF16 blocks run it (bf16_layers): the same keys with the linears and
  /// attention in BF16.
  TrainingSpec bf16_block() const { return in_precision(hardware::Precision::bf16); }
  /// This training as module `m` runs it (module_precision).
  TrainingSpec for_module(QuantModule m) const { return in_precision(precision_of(m)); }
  /// The same keys with every linear in precision `p` and no per-block or per-module exceptions.
  TrainingSpec in_precision(hardware::Precision p) const {
    TrainingSpec b = *this;
    b.precision = p;
    b.fp8_attention = fp8_attention && hardware::is_low_precision(p);
    b.bf16_layers = {};
    b.module_precision = {};
    return b;
  }
  bool has_bf16_blocks() const { return hardware::is_low_precision(precision) && bf16_layers.any(); }
};

/// The ZeRO stage the step runs (its DP traffic; memory follows ParallelSpec::zero_stage). ZeRO-2
/// runs ZeRO-1's step under pipelining with overlapped gradient reduction: both reduce-scatter the
/// gradients once, in the last micro-batch, bucket by bucket as the backward fills them
/// (ParallelSpec::reduces_grads_every_micro_batch), and all-gather the parameters after the
/// optimizer. Without the overlap ZeRO-2 still launches each bucket when it fills, where ZeRO-1
/// holds them to the end of the backward. Sweeps and plans simulate such a pair once.
inline int step_zero_stage(const TrainingSpec& t, const ParallelSpec& p) {
  return p.zero_stage == 2 && !p.reduces_grads_every_micro_batch() && t.overlap_grad_reduce ? 1 : p.zero_stage;
}

inline const char* name(PipelineSchedule s) { return name_in(kPipelineScheduleNames, s).data(); }

inline const char* name(MoeDispatcher d) { return kMoeDispatcherNames[static_cast<int>(d)]; }

inline const char* name(Fp8Recipe r) { return kFp8RecipeNames[static_cast<int>(r)]; }

inline const char* name(Recompute r) { return name_in(kRecomputeNames, r).data(); }

}  // namespace clustersim::models
