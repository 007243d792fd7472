#pragma once
// The fused expert-parallel exchange kernels (DeepEP's normal kernels, NVIDIA's HybridEP) as
// measured within one NVLink domain (hardware/kernels/ep_kernels.csv): a kernel-bound rate that
// can sit below what the links carry (NCCL's all-to-all), set by the SMs the kernels are given
// and the ranks they serve. Across NVLink domains RDMA bounds them; no rows there.
#include <string>
#include <vector>

#include "hardware/gpu_spec.hpp"

namespace clustersim::hardware {

enum class EpKernelImpl { deepep, hybridep };
/// dispatch in FP8 or BF16 (received token rows), combine (BF16 rows sent back).
enum class EpKernelOp { dispatch_fp8, dispatch_bf16, combine };

/// The algorithm bandwidth of `impl`'s `op` given `sms` SMs over `ranks` ranks of one NVLink
/// domain, from the first data GPU of `gpu.ep_kernel_data` with rows for impl and op: linear in
/// SMs between measured SM counts and in ranks between measured group sizes, the nearest measured
/// value beyond either end. Zero when no data GPU has rows (the links alone bound the exchange).
units::BytesPerSecond ep_kernel_rate(const GpuSpec& gpu, EpKernelImpl impl, EpKernelOp op, int ranks, int sms);

/// Whether `device` (the csv's device column) has rows, for the profile loader.
bool ep_kernel_device_known(const std::string& device);

}  // namespace clustersim::hardware
