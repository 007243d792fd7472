#pragma once
// Host and framework overhead around the kernels: CPU launch cost (eager vs CUDA graphs), the
// per-step fixed work (gradient clipping, host synchronizations, batch upload). Sources in
// layer_ops_host.cpp; docs/recipes.md.
#include "hardware/gpu_spec.hpp"
#include "models/layer_ops.hpp"

namespace clustersim::models {

/// CPU time to issue one kernel from PyTorch without CUDA graphs: the profile's host CPU
/// (hardware::GpuSpec::host_launch, hardware/kernels/host_op_cost.csv).
double host_launch_s(const hardware::GpuSpec& gpu);

/// The host's cost of issuing `op`'s kernels in units of one plain PyTorch op: a GEMM or attention
/// kernel is a Transformer Engine module call, which costs 2.7 plain ops on the CPU
/// (hardware/kernels/host_op_cost.csv: TE Linear over torch Linear forward, 99.66 / 37.08 us on
/// GB200, 90.53 / 33.17 us on GH200; the same ratio is taken for x86, where the TE row is unread).
double host_op_units(const KernelOp& op);

/// CPU time of one MoE layer's forward dispatch call on this node's host (models/detail/moe_host.cpp:
/// DeepEP / HybridEP measured in Megatron-Bridge's Nsight profile; the others one op per exchange).
double moe_dispatch_call_s(const hardware::GpuSpec& gpu, MoeDispatcher d);

/// GPU-side idle between dependent kernels as the step runs: the profile's gap, shorter when the
/// step is replayed from CUDA graphs.
double kernel_gap_s(const hardware::GpuSpec& gpu, const TrainingSpec& t);

/// `op` (one fused kernel's cost) run as `kernels` separate launches: each launch after the first
/// adds the GPU-side gap, and the host issues each.
KernelOp as_kernels(KernelOp op, int kernels, const hardware::GpuSpec& gpu, const TrainingSpec& t);

/// The GPU waits for the CPU when launching the pass's kernels takes longer than running them.
/// Returns the wait (0 under CUDA graphs: one graph launch per pass) as an op to add to it.
KernelOp host_wait(const hardware::GpuSpec& gpu, const PassCost& pass, int extra_kernels, double extra_gpu_s,
                   const TrainingSpec& t);

/// Host synchronizations per step, each after a scalar all-reduce: the gradient norm read by
/// clip_grad_norm (Megatron clip_grads.py: total_norm.item()) and the loss reduced for logging
/// (Megatron training.py / torchtitan train.py: loss .item()). The all-reduces are costed by the
/// step on the scenario's network (models/step.cpp), like every other transfer.
inline constexpr int kHostSyncsPerStep = 2;

/// Work done once per optimizer step outside the kernels of the passes and the optimizer:
/// gradient-norm for clipping over this rank's (sharded) gradients and the host
/// synchronizations of clipping and loss logging (their all-reduces: see kHostSyncsPerStep).
PassCost step_fixed_work(const hardware::GpuSpec& gpu, const TrainingSpec& t, double grad_norm_params);

/// One micro-batch's token ids and labels copied host to device over the node's host link
/// (`host_bps`, the topology's PCIe; 0: not costed).
KernelOp batch_upload(const TrainingSpec& t, double host_bps);

}  // namespace clustersim::models
