#pragma once
// Host and framework overhead around the kernels: CPU launch cost (eager vs CUDA graphs), the
// per-step fixed work (gradient clipping, host synchronizations, batch upload). Sources in
// layer_ops_host.cpp; docs/recipes.md.
#include "hardware/gpu_spec.hpp"
#include "models/layer_ops.hpp"

namespace clustersim::models {

/// CPU time to launch one kernel from PyTorch without CUDA graphs.
double host_launch_s();

/// GPU-side idle between dependent kernels as the step runs: the profile's gap, shorter when the
/// step is replayed from CUDA graphs.
double kernel_gap_s(const hardware::GpuSpec& gpu, const TrainingSpec& t);

/// The GPU waits for the CPU when launching the pass's kernels takes longer than running them.
/// Returns the wait (0 under CUDA graphs: one graph launch per pass) as an op to add to it.
KernelOp host_wait(const PassCost& pass, int extra_kernels, double extra_gpu_s, const TrainingSpec& t);

/// Work done once per optimizer step outside the kernels of the passes and the optimizer:
/// gradient-norm for clipping over this rank's (sharded) gradients, the scalar all-reduces
/// and host synchronizations of clipping and loss logging.
PassCost step_fixed_work(const hardware::GpuSpec& gpu, const TrainingSpec& t, double grad_norm_params);

/// One micro-batch's token ids and labels copied host to device.
KernelOp batch_upload(const hardware::GpuSpec& gpu, const TrainingSpec& t);

}  // namespace clustersim::models
