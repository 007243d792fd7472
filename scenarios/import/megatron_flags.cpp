#include "scenarios/import/megatron_flags.hpp"

#include <string_view>

namespace clustersim::scenarios::importers {

const std::set<std::string>& megatron_boolean_flags() {
  static const std::set<std::string> flags = {
      "swiglu", "squared-relu", "untie-embeddings-and-output-weights", "group-query-attention",
      "disable-bias-linear", "add-qkv-bias", "add-bias-linear", "sequence-parallel", "use-distributed-optimizer",
      "overlap-grad-reduce", "overlap-param-gather", "tp-comm-overlap", "no-overlap-p2p-communication", "bf16", "fp16", "use-flash-attn",
      "recompute-activations", "multi-latent-attention", "use-torch-fsdp2", "use-custom-fsdp", "use-megatron-fsdp",
      "accumulate-allreduce-grads-in-fp32", "grad-reduce-in-bf16", "enable-cuda-graph", "external-cuda-graph",
      "moe-grouped-gemm", "moe-enable-deepep", "account-for-embedding-in-pipeline-split",
      "account-for-loss-in-pipeline-split", "use-mcore-models", "use-legacy-models", "no-masked-softmax-fusion",
      "no-bias-gelu-fusion", "no-bias-dropout-fusion", "no-gradient-accumulation-fusion", "use-rotary-position-embeddings",
      "attention-softmax-in-fp32", "mock-data", "no-load-optim", "no-load-rng", "finetune", "qk-layernorm",
      "apply-layernorm-1p", "no-async-tensor-model-parallel-allreduce", "log-throughput", "log-timers-to-tensorboard",
      "use-checkpoint-args", "no-position-embedding", "moe-router-enable-expert-bias", "moe-router-pre-softmax",
      "manual-gc", "no-create-attention-mask-in-dataloader", "cpu-offloading", "defer-embedding-wgrad-compute",
      "activation-func-fp8-input-store",
      "first-last-layers-bf16",
      "overlap-moe-expert-parallel-comm", "moe-permute-fusion", "cross-entropy-loss-fusion", "no-rope-fusion",
      "check-for-nan-in-loss-and-grad", "distributed-optimizer", "standalone", "no-python", "tensorboard-log-interval",
      "moe-router-force-load-balancing"};
  return flags;
}

const std::set<std::string>& megatron_mapped_flags() {
  static const std::set<std::string> flags = {
      // model
      "num-layers", "hidden-size", "num-attention-heads", "group-query-attention", "num-query-groups",
      "ffn-hidden-size", "swiglu", "squared-relu", "untie-embeddings-and-output-weights", "normalization",
      "position-embedding-type", "use-rotary-position-embeddings", "no-position-embedding", "disable-bias-linear",
      "add-bias-linear", "add-qkv-bias", "hidden-dropout", "attention-dropout", "kv-channels", "vocab-size",
      "tokenizer-type", "tokenizer-model", "make-vocab-size-divisible-by", "max-position-embeddings", "num-experts",
      "moe-router-topk", "moe-ffn-hidden-size", "moe-shared-expert-intermediate-size", "moe-layer-freq",
      "moe-expert-capacity-factor", "moe-token-dispatcher-type", "moe-enable-deepep", "moe-flex-dispatcher-backend",
      "moe-deepep-num-sms", "moe-hybridep-num-sms", "moe-flex-dispatcher-num-sms", "moe-grouped-gemm",
      "multi-latent-attention", "q-lora-rank", "kv-lora-rank", "qk-head-dim", "qk-pos-emb-head-dim", "v-head-dim",
      "mtp-num-layers", "window-size", "window-attn-skip-freq", "overlap-moe-expert-parallel-comm",
      "moe-router-force-load-balancing", "moe-router-fusion", "moe-permute-fusion", "moe-router-num-groups",
      "moe-router-group-topk",
      // parallelism
      "tensor-model-parallel-size", "pipeline-model-parallel-size", "num-layers-per-virtual-pipeline-stage",
      "virtual-pipeline-model-parallel-size", "num-virtual-stages-per-pipeline-rank", "context-parallel-size",
      "expert-model-parallel-size", "expert-tensor-parallel-size", "sequence-parallel", "use-distributed-optimizer",
      "use-torch-fsdp2", "use-custom-fsdp", "use-megatron-fsdp", "data-parallel-sharding-strategy",
      "overlap-grad-reduce", "overlap-param-gather", "tp-comm-overlap", "no-overlap-p2p-communication",
      "decoder-first-pipeline-num-layers", "decoder-last-pipeline-num-layers", "pipeline-model-parallel-layout",
      "account-for-embedding-in-pipeline-split", "account-for-loss-in-pipeline-split",
      // training
      "seq-length", "micro-batch-size", "global-batch-size", "recompute-granularity", "recompute-method",
      "recompute-num-layers", "recompute-activations", "recompute-modules", "bf16", "fp16", "fp8-format", "fp8-recipe",
      "fp4-format", "train-iters", "train-samples", "use-flash-attn", "attention-backend", "transformer-impl",
      "accumulate-allreduce-grads-in-fp32", "grad-reduce-in-bf16", "enable-cuda-graph", "external-cuda-graph",
      "cuda-graph-impl", "cuda-graph-scope", "cpu-offloading", "cpu-offloading-num-layers",
      "activation-func-fp8-input-store", "cross-entropy-loss-fusion", "cross-entropy-fusion-impl",
      "first-last-layers-bf16", "num-layers-at-start-in-bf16", "num-layers-at-end-in-bf16", "te-precision-config-file",
      // cluster (torchrun)
      "nnodes", "nproc-per-node"};
  return flags;
}

const std::set<std::string>& megatron_multi_value_flags() {
  static const std::set<std::string> flags = {"recompute-modules", "rampup-batch-size", "moe-router-load-balancing-type",
                                              "moe-aux-loss-coeff", "cuda-graph-scope"};
  return flags;
}

bool megatron_flag_is_irrelevant(const std::string& name) {
  static constexpr std::string_view kPrefixes[] = {
      "lr", "min-lr", "weight-decay", "start-weight-decay", "end-weight-decay", "clip-grad", "adam-", "sgd-",
      "init-method", "seed", "data-", "split", "vocab-file", "merge-file", "tokenizer", "save", "load",
      "eval-", "log-", "tensorboard", "wandb", "exit-", "distributed-", "num-workers", "dataloader", "mock-data",
      "rotary-", "norm-epsilon", "layernorm-epsilon", "master-", "node-rank", "rdzv", "ckpt", "dist-ckpt",
      "timing-log", "profile", "moe-aux-loss", "moe-z-loss", "moe-router-", "loss-scale", "initial-loss-scale",
      "hysteresis", "fp8-amax", "use-mcore", "decoupled-lr", "decoupled-min-lr", "tiktoken-", "mscale",
      "container-"};  // container-*: srun's (pyxis) flags when the command runs under srun
  static const std::set<std::string> kExact = {
      "use-legacy-models", "no-masked-softmax-fusion", "no-bias-gelu-fusion", "no-bias-dropout-fusion",
      "no-gradient-accumulation-fusion", "attention-softmax-in-fp32", "no-load-optim", "no-load-rng", "finetune",
      "use-checkpoint-args", "manual-gc", "manual-gc-interval", "no-create-attention-mask-in-dataloader",
      "check-for-nan-in-loss-and-grad", "standalone", "no-python", "max-restarts", "qk-layernorm",
      "apply-layernorm-1p", "moe-permute-fusion", "no-rope-fusion", "optimizer",
      "use-rope-scaling", "untie-embeddings", "override-opt-param-scheduler", "use-cpu-initialization",
      "empty-unused-memory-level", "micro-batch-size-per-gpu", "no-async-tensor-model-parallel-allreduce",
      "no-check-for-nan-in-loss-and-grad", "calculate-per-token-loss", "no-mmap-bin-files", "auto-detect-ckpt-format",
      "init-model-with-meta-device", "mtp-loss-scaling-factor", "logging-level", "mpi"};
  if (kExact.count(name)) return true;
  for (std::string_view p : kPrefixes)
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

}  // namespace clustersim::scenarios::importers
