// The kernels of one Mamba-1 mixer (MambaSpec kind mamba1) as Jamba runs it: transformers'
// JambaMambaMixer on its CUDA path, whose scan is mamba_ssm's selective_scan_cuda.
#include <cmath>
#include <string>

#include "models/detail/kernel_builder.hpp"
#include "models/flops.hpp"
#include "models/mamba_ops.hpp"

namespace clustersim::models {
namespace {

// Tokens per chunk of selective_scan_cuda: the forward keeps each chunk's last state (fp32 pairs)
// for the backward (mamba_ssm csrc/selective_scan, kChunkSize = kNThreads · kNItems = 2048).
constexpr double kScanChunkTokens = 2048;
// The backward kernel reruns the forward recurrence to rebuild the states, runs the reverse
// recurrence of the output gradient, and forms du, dΔ, dB, dC, dA, dD from both: about three
// forward scans of work (an estimate from the kernel's structure; not measured).
constexpr double kScanBackwardWork = 3.0;

// The selective scan: per channel and state, FP32 CUDA-core work (no Tensor Cores), or its HBM
// traffic, whichever is slower. The FP32 vector peak is the kernel's upper bound: its own
// efficiency is measured nowhere public, so this is the fastest the scan can run.
KernelOp scan_kernel(const KernelBuilder& k, std::string name, double flop, double bytes) {
  KernelOp op = k.memory(std::move(name), bytes);
  op.kind = OpKind::attention;
  op.flop = flop;
  const double fp32 = k.gpu.peak(hardware::Precision::fp32).si();
  const double compute = fp32 > 0 ? flop / fp32 + k.gpu.kernel_gap.si() : 0.0;
  if (compute > op.time_s) op.time_s = compute, op.bound = hardware::Bound::compute;
  return op;
}

}  // namespace

MambaOps mamba1_mixer_ops(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu) {
  const KernelBuilder k = KernelBuilder::training(gpu, t, p);
  const MambaSpec& x = m.mamba;
  const double tp = p.tp, e = hardware::storage_bytes(t.precision), h = m.hidden;
  const double T = double(t.micro_batch) * t.seq_len / p.cp;
  const double D = x.inner() / tp, N = x.state_dim, R = x.dt_rank, dbc = R + 2 * N;
  MambaOps o;
  k.linear(&o.in_fwd, &o.in_bwd, "mamba.in_proj", T, 2 * D, h);
  o.in_fwd.add(k.memory("mamba.conv1d", 2 * T * D * e));
  o.in_bwd.add(k.memory("mamba.conv1d.bwd", 3 * T * D * e));
  // x_proj, Jamba's RMSNorms on dt, B and C, dt_proj: the scan's inputs.
  k.linear(&o.core_fwd, &o.core_bwd, "mamba.x_proj", T, dbc, D);
  o.core_fwd.add(k.memory("mamba.dt_bc_norms", 2 * T * dbc * e));
  o.core_bwd.add(k.memory("mamba.dt_bc_norms.bwd", 3 * T * dbc * e));
  k.linear(&o.core_fwd, &o.core_bwd, "mamba.dt_proj", T, D, R);
  // Forward reads u, Δ, z, B and C and writes the gated output and each chunk's last states;
  // backward also reads the output gradient and writes du, dΔ, dz and fp32 dB, dC.
  const double states = std::ceil(T / kScanChunkTokens) * D * N * 2 * 4.0;
  const double flop = 7.0 * T * D * N;
  o.core_fwd.add(scan_kernel(k, "mamba.selective_scan", flop, 3 * T * D * e + 2 * T * N * e + T * D * e + states));
  o.core_bwd.add(scan_kernel(k, "mamba.selective_scan.bwd", kScanBackwardWork * flop,
                             4 * T * D * e + 2 * T * N * e + states + 3 * T * D * e + 2 * T * N * 4.0));
  // out_proj in its own precision when the recipe sets one (module_precision).
  KernelBuilder::training(gpu, t.for_module(QuantModule::mamba_out_proj), p)
      .linear(&o.out_fwd, &o.out_bwd, "mamba.out_proj", T, h, D);
  o.state_bytes = states;
  o.scan_flop_fwd = mamba_scan_flop_per_token(x) / tp * T;
  const double in = t.saved_linear_input_bytes(), sp = p.sequence_parallel ? tp : 1.0;
  o.saved_bytes = T * h * in / sp      // in_proj input
                  + 2 * T * D * e      // x (conv input) and z
                  + T * D * in         // conv output u (the scan's and x_proj's input)
                  + 2 * T * dbc * e    // x_proj output and the normed dt, B, C
                  + T * D * e          // Δ (dt_proj output)
                  + states             // the chunks' last states
                  + T * D * in;        // scan output (out_proj input)
  return o;
}

}  // namespace clustersim::models
