#include "models/mamba_ops.hpp"

#include <algorithm>
#include <string>

#include "models/flops.hpp"
#include "models/detail/kernel_builder.hpp"

namespace clustersim::models {

namespace {

// One SSD kernel: its tensor-core work as one GEMM of the batched shape (every (chunk, head)
// product is an independent [m, k]·[k, n] tile problem, so the batch is the GEMM's M), its HBM
// traffic, and whichever bound is slower. The five forward kernels (chunk_cumsum, bmm_chunk,
// chunk_state, state_passing, chunk_scan; mamba_ssm ssd_combined.py) are separate launches and
// mostly memory-bandwidth and latency bound (PyTorch blog "Accelerating Mamba2 with Kernel
// Fusion", 2026; docs/reference/mamba2_ssd.md).
KernelOp ssd_kernel(const KernelBuilder& k, std::string name, double m, double n, double kk, double bytes) {
  KernelOp mem = k.memory(name, bytes);
  if (m <= 0) return mem;
  KernelOp g = k.warp_mma_gemm(name, m, n, kk);
  g.kind = OpKind::attention;
  g.bytes = bytes;
  if (mem.time_s > g.time_s) g.time_s = mem.time_s, g.bound = hardware::Bound::memory;
  return g;
}

}  // namespace

MambaOps mamba_mixer_ops(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu) {
  if (m.mamba.mamba1()) return mamba1_mixer_ops(m, t, p, gpu);
  // in_proj and out_proj are Transformer Engine linears (the training precision, as the MLA
  // projections: models/mla_ops.cpp); conv1d, scan and norm stay BF16.
  const KernelBuilder k = KernelBuilder::training(gpu, t, p);
  const KernelBuilder scan{gpu, hardware::Precision::bf16, t.ideal};  // the Triton scan runs in BF16
  const MambaSpec& x = m.mamba;
  const double tp = p.tp, e = hardware::storage_bytes(t.precision), h = m.hidden;
  const double T = double(t.micro_batch) * t.seq_len / p.cp;  // tokens of the micro-batch on this rank
  const double H = x.heads / tp, G = std::max(1.0, x.groups / tp), P = x.head_dim, N = x.state_dim, Q = x.chunk;
  const double inner = H * P, conv = inner + 2 * G * N, in_width = 2 * inner + 2 * G * N + H;
  const double chunks = T / Q;  // (batch, chunk) pairs
  MambaOps o;
  k.linear(&o.in_fwd, &o.in_bwd, "mamba.in_proj", T, in_width, h);
  // causal_conv1d over x, B, C with SiLU: read the input and the taps, write the output;
  // backward reads input and gradient, writes dx (the weight gradient rides along).
  o.in_fwd.add(k.memory("mamba.conv1d", 2 * T * conv * e));
  o.in_bwd.add(k.memory("mamba.conv1d.bwd", 3 * T * conv * e));

  const double states = chunks * H * P * N * 4.0;  // fp32
  o.state_bytes = states;
  const double xb = T * inner * e, bc = T * G * N * e, cb = chunks * G * Q * Q * 4.0, dt = T * H * 4.0;
  o.core_fwd.add(k.memory("ssd.chunk_cumsum", T * H * e + 2 * dt));
  o.core_fwd.add(ssd_kernel(scan, "ssd.bmm_chunk", chunks * G * Q, Q, N, 2 * bc + cb));
  o.core_fwd.add(ssd_kernel(scan, "ssd.chunk_state", chunks * H * P, N, Q, xb + bc + 2 * dt + states));
  o.core_fwd.add(k.memory("ssd.state_passing", 2 * states));
  o.core_fwd.add(ssd_kernel(scan, "ssd.chunk_scan", chunks * H * Q, P, Q + N, cb + xb + bc + states + xb + 2 * dt));
  // Backward (mamba_ssm _mamba_chunk_scan_combined_bwd): the states rebuilt, then the state
  // gradients, dx, dC (and dCB), dB, and the dt/dA reductions.
  o.core_bwd.add(ssd_kernel(scan, "ssd.bwd.chunk_state", chunks * H * P, N, Q, xb + bc + 2 * dt + states));
  o.core_bwd.add(k.memory("ssd.bwd.state_passing", 4 * states));
  o.core_bwd.add(ssd_kernel(scan, "ssd.bwd.dstates", chunks * H * N, P, Q, bc + xb + 2 * dt + states));
  o.core_bwd.add(ssd_kernel(scan, "ssd.bwd.dx", chunks * H * Q, P, Q + N, cb + bc + 2 * xb + states + 2 * xb));
  o.core_bwd.add(ssd_kernel(scan, "ssd.bwd.dC", chunks * H * Q, N + Q, P, 2 * xb + states + bc + cb));
  o.core_bwd.add(ssd_kernel(scan, "ssd.bwd.dB", chunks * H * Q, N, P, 2 * xb + states + bc));
  o.core_bwd.add(k.memory("ssd.bwd.ddt", 4 * dt + 2 * xb));
  // Gated RMSNorm over groups (mamba_ssm rmsnorm_fn, norm_before_gate false): read y and z,
  // write the output; backward reads y, z, the gradient, writes dy and dz.
  o.core_fwd.add(k.memory("mamba.gated_norm", 3 * xb));
  o.core_bwd.add(k.memory("mamba.gated_norm.bwd", 5 * xb));
  // out_proj in its own precision when the recipe sets one (module_precision).
  KernelBuilder::training(gpu, t.for_module(QuantModule::mamba_out_proj), p)
      .linear(&o.out_fwd, &o.out_bwd, "mamba.out_proj", T, h, inner);

  o.scan_flop_fwd = ssd_flop_per_token(MambaSpec{x.state_dim, int(H), x.head_dim, int(G), x.conv_kernel, x.chunk}) * T;
  const double in = t.saved_linear_input_bytes(), sp = p.sequence_parallel ? tp : 1.0;
  o.saved_bytes = T * h * in / sp        // in_proj input
                  + T * (inner + H) * e  // z and dt
                  + 2 * T * conv * e     // conv input and output (x, B, C)
                  + xb                   // scan output (norm input)
                  + T * inner * in;      // norm output (out_proj input)
  return o;
}

}  // namespace clustersim::models
