#include "models/layer_ops_host.hpp"

#include <algorithm>

#include "hardware/kernel_cost.hpp"
#include "models/detail/moe_host.hpp"

namespace clustersim::models {
namespace {

// hardware.md §3.10 [gpu-benches] H200, 10 000 back-to-back small kernels: ≈2.5 µs each when
// streamed, ≈1.3 µs replayed from a CUDA graph.
constexpr double kGraphGapRatio = 1.3 / 2.5;
// Megatron keeps FP32 main gradients for mixed precision (DistributedDataParallel
// grad_reduce_in_fp32 / main_grad): the norm reads 4 bytes per parameter.
constexpr double kMainGradBytes = 4.0;
// Token ids and labels, int64 each (Megatron get_batch, torchtitan dataloader).
constexpr double kBatchBytesPerToken = 2 * 8.0;

// TE module call over a plain op, host_op_cost.csv: mean of GB200 (99.66/37.08) and GH200 (90.53/33.17).
constexpr double kTeModuleOps = (99.66 / 37.08 + 90.53 / 33.17) / 2;

// A raw kernel launch from C++ over a plain PyTorch op: hardware.md §3.10 [gpu-benches] streams
// back-to-back small kernels at 2.5 us each on H200, an upper bound on the CPU's launch call;
// host_op_cost.csv's torch Linear forward costs 13.48 us on a DGX H100's Xeon.
constexpr double kLoopLaunchOps = 2.5 / 13.48;

}  // namespace

double host_op_units(const KernelOp& op) {
  const int framework = op.kernels - op.loop_launches;
  return framework * (op.kind == OpKind::memory ? 1.0 : kTeModuleOps) + op.loop_launches * kLoopLaunchOps;
}

double host_launch_s(const hardware::GpuSpec& gpu) { return gpu.host_launch.si(); }

double moe_dispatch_call_s(const hardware::GpuSpec& gpu, MoeDispatcher d) {
  return dispatch_call_units(d) * host_launch_s(gpu);
}

double kernel_gap_s(const hardware::GpuSpec& gpu, const TrainingSpec& t) {
  return t.cuda_graphs ? gpu.kernel_gap.si() * kGraphGapRatio : gpu.kernel_gap.si();
}

KernelOp as_kernels(KernelOp op, int kernels, const hardware::GpuSpec& gpu, const TrainingSpec& t) {
  op.time_s += (kernels - 1) * kernel_gap_s(gpu, t);
  op.kernels = kernels;
  return op;
}

KernelOp host_wait(const hardware::GpuSpec& gpu, const PassCost& pass, int extra_kernels, double extra_gpu_s,
                   const TrainingSpec& t) {
  KernelOp op{"host_launch_wait", OpKind::memory, 0, 0, 0, hardware::Bound::latency};
  op.kernels = 0;
  if (t.cuda_graphs || t.ideal.host) return op;
  double kernels = extra_kernels;
  for (const auto& o : pass.ops) kernels += host_op_units(o);
  // The CPU runs ahead of the GPU inside a pass; it is the bottleneck only when its launches
  // take longer than the kernels they launch.
  op.time_s = std::max(0.0, kernels * host_launch_s(gpu) - (pass.time_s + extra_gpu_s));
  return op;
}

PassCost step_fixed_work(const hardware::GpuSpec& gpu, const TrainingSpec& t, double grad_norm_params) {
  PassCost pc;
  if (t.ideal.host) return pc;
  const auto norm = hardware::memory_cost(gpu, units::Bytes(grad_norm_params * kMainGradBytes));
  pc.add({"grad_norm", OpKind::memory, 0, grad_norm_params * kMainGradBytes, norm.time.si(), norm.bound});
  // Each sync drains the launch queue, so the GPU then waits one launch before it has work again.
  const double sync = t.cuda_graphs ? 0.0 : host_launch_s(gpu);
  pc.add({"host_syncs", OpKind::memory, 0, 0, kHostSyncsPerStep * sync, hardware::Bound::latency});
  return pc;
}

KernelOp batch_upload(const TrainingSpec& t, double host_bps) {
  const double bytes = double(t.micro_batch) * t.seq_len * kBatchBytesPerToken;
  const double time = host_bps > 0 && !t.ideal.host ? bytes / host_bps : 0.0;
  return {"batch_h2d", OpKind::memory, 0, bytes, time, hardware::Bound::latency};
}

}  // namespace clustersim::models
