#include "models/linear_attention_ops.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <string>

#include "models/flops.hpp"
#include "models/detail/kernel_builder.hpp"

namespace clustersim::models {

namespace {

struct Tile {
  double n, k;  ///< one [C-row tile]·[k, n] product per (chunk, head): M = chunks·heads·C
};

// One fla kernel: its tensor-core products as GEMMs of the batched shape (each (chunk, head)
// tile is an independent problem, so the batch is M) on the GEMM shape model, one launch for
// all of them, against its HBM traffic on the memory roofline; the slower bound wins. The same
// costing as the Mamba-2 SSD kernels (models/mamba_ops.cpp).
KernelOp fla_kernel(const KernelBuilder& k, std::string name, double m, std::initializer_list<Tile> tiles, double bytes) {
  KernelOp mem = k.memory(name, bytes);
  KernelOp op{std::move(name), OpKind::attention, 0, bytes, k.gpu.kernel_gap.si(), hardware::Bound::compute};
  for (const Tile& t : tiles) {
    const KernelOp g = k.warp_mma_gemm(op.name, m, t.n, t.k);
    op.flop += g.flop, op.time_s += g.time_s - k.gpu.kernel_gap.si();
  }
  if (mem.time_s > op.time_s) op.time_s = mem.time_s, op.bound = hardware::Bound::memory;
  return op;
}

// The chunk-state passes (fla chunk_gated_delta_rule_fwd_h, its rerun in the backward, and the
// reverse bwd_dhu) walk a sequence's chunks one after another: each step needs the previous
// state. Their grid is (sequence, value head, V / kStateBlockV) blocks, so with few sequences and
// heads the GPU is not filled and the kernel takes chunks × (one step's latency) per wave of
// blocks, however little work a step holds. kStateStepLatency: FITTED on the 7 forward rows with 8
// value heads of hardware/kernels/fla_gdn.csv (fla 0.5.1 on H200, one to four sequences of
// 2,048 to 32,768 tokens: measured minus the model's other kernels, per chunk step); every other
// row of that table, forward and backward, is out of sample for it (tests/models/fla_rates_test.cpp).
// Used for every GPU: a dependent step is a fixed count of cycles, and the Hopper and Blackwell
// parts run within 10 % of H200's clock.
constexpr double kStateStepLatency = 1.13e-6;  // seconds per chunk step
// The reverse pass forms dh from q and the output gradient, and dv from it, each step: twice the
// forward step's dependent work (an estimate from the kernel's structure, not fitted).
constexpr double kReverseStepWork = 2.0;
constexpr double kStateBlockV = 64;  // fla's value-block width for the state kernels (BV)

void recurrent_floor(KernelOp* op, const hardware::GpuSpec& gpu, double sequences, double chunks_per_sequence,
                     double heads, double v, double step_work) {
  const double blocks = sequences * heads * std::ceil(v / kStateBlockV);
  const double waves = std::ceil(blocks / std::max(1, gpu.sms));
  const double floor = waves * chunks_per_sequence * kStateStepLatency * step_work + gpu.kernel_gap.si();
  if (floor > op->time_s) op->time_s = floor, op->bound = hardware::Bound::latency;
}

}  // namespace

MambaOps linear_attention_ops(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu) {
  const KernelBuilder k = KernelBuilder::training(gpu, t, p);
  const KernelBuilder scan{gpu, hardware::Precision::bf16, t.ideal};  // fla's Triton kernels run in BF16
  const LinearAttentionSpec& x = m.linear_attention;
  const bool kda = x.kind == LinearKind::kda;
  const double tp = p.tp, e = hardware::storage_bytes(t.precision), h = m.hidden;
  const double T = double(t.micro_batch) * t.seq_len / p.cp;
  const double H = x.heads / tp, K = x.head_dim, V = x.v_dim(), C = x.chunk, d = x.v_dim();
  const double kd = x.key_dim() / tp, vd = x.value_dim() / tp, conv = 2 * kd + vd;
  const std::string n = kda ? "kda" : "gdn";
  MambaOps o;
  // Input projections (one fused GEMM from h): GDN in_proj_qkvz + in_proj_ba; KDA q, k, v, b and
  // the low-rank gates' down-projections f_a, g_a (their up-projections f_b, g_b after).
  const double in_width = kda ? conv + H + 2 * d : 2 * kd + 2 * vd + 2 * H;
  k.linear(&o.in_fwd, &o.in_bwd, n + ".in_proj", T, in_width, h);
  if (kda) k.linear(&o.in_fwd, &o.in_bwd, n + ".gate_up_proj", T, kd + vd, d);
  o.in_fwd.add(k.memory(n + ".conv1d", 2 * T * conv * e));
  o.in_bwd.add(k.memory(n + ".conv1d.bwd", 3 * T * conv * e));

  // Operands on the value heads (q and k repeated when there are fewer key heads).
  const double chunks = T / C, M = chunks * H * C;
  const double qb = T * H * K * e, vb = T * H * V * e, ab = T * H * C * 4.0, gb = T * H * (kda ? K : 1.0) * 4.0;
  const double states = chunks * H * K * V * e;  // fla keeps the chunk states in the input dtype
  o.state_bytes = states;
  o.core_fwd.add(k.memory(n + ".qk_l2norm", 4 * qb));
  o.core_fwd.add(k.memory(n + ".gate_cumsum", (kda ? T * vd * e : 0.0) + 2 * gb));
  o.core_fwd.add(fla_kernel(scan, n + ".kkt", M, {{C, K}}, qb + gb + ab));
  o.core_fwd.add(fla_kernel(scan, n + ".solve_tril", M, {{C, C / 3}}, 2 * ab));
  o.core_fwd.add(fla_kernel(scan, n + ".wy", M, {{K, C}, {V, C}}, ab + qb + vb + gb + qb + vb));
  const double sequences = t.micro_batch, steps = t.seq_len / p.cp / C;
  KernelOp state_pass = fla_kernel(scan, n + ".state_pass", M, {{V, K}, {V, K}}, 2 * qb + 2 * vb + gb + states);
  recurrent_floor(&state_pass, gpu, sequences, steps, H, V, 1.0);
  o.core_fwd.add(state_pass);
  o.core_fwd.add(fla_kernel(scan, n + ".output", M, {{V, K}, {C, K}, {V, C}}, 2 * qb + vb + gb + states + vb));
  // Backward (fla chunk_gated_delta_rule_bwd / chunk_kda_bwd): W, U and the states recomputed,
  // the local dV, the reverse state pass (dS, dV'), dQ/dK/dW, the WY backward through T, dA·K.
  o.core_bwd.add(fla_kernel(scan, n + ".bwd.recompute_wy", M, {{K, C}, {V, C}}, ab + 2 * qb + 2 * vb + gb));
  KernelOp recompute_h = fla_kernel(scan, n + ".bwd.recompute_h", M, {{V, K}, {V, K}}, 2 * qb + 2 * vb + gb + states);
  recurrent_floor(&recompute_h, gpu, sequences, steps, H, V, 1.0);
  o.core_bwd.add(recompute_h);
  o.core_bwd.add(fla_kernel(scan, n + ".bwd.dv_local", M, {{C, K}, {V, C}}, 2 * qb + 2 * vb + gb));
  KernelOp dhu = fla_kernel(scan, n + ".bwd.dhu", M, {{V, K}, {V, K}, {V, K}}, 3 * qb + 3 * vb + gb + 2 * states);
  recurrent_floor(&dhu, gpu, sequences, steps, H, V, kReverseStepWork);
  o.core_bwd.add(dhu);
  o.core_bwd.add(fla_kernel(scan, n + ".bwd.dqkwg", M, {{K, V}, {K, V}, {K, V}, {C, V}, {K, C}, {K, C}},
                            4 * qb + 3 * vb + 2 * gb + 2 * states + 3 * qb));
  o.core_bwd.add(fla_kernel(scan, n + ".bwd.wy", M, {{C, K}, {C, V}, {K, C}, {V, C}, {C, C}, {C, C}},
                            2 * ab + 3 * qb + 3 * vb + 2 * gb));
  o.core_bwd.add(fla_kernel(scan, n + ".bwd.kkt", M, {{K, C}, {K, C}}, ab + 2 * qb + gb));
  o.core_bwd.add(k.memory(n + ".bwd.gate_cumsum", 4 * gb));
  o.core_bwd.add(k.memory(n + ".bwd.qk_l2norm", 6 * qb));
  // Gated RMSNorm on value heads: read y and the gate, write the output; backward reads y, the
  // gate and the gradient, writes dy and the gate's gradient.
  o.core_fwd.add(k.memory(n + ".gated_norm", 3 * T * vd * e));
  o.core_bwd.add(k.memory(n + ".gated_norm.bwd", 5 * T * vd * e));
  k.linear(&o.out_fwd, &o.out_bwd, n + ".out_proj", T, h, vd);

  LinearAttentionSpec local = x;
  local.heads = int(H);
  o.scan_flop_fwd = delta_rule_flop_per_token(local) * T;
  const double in = t.saved_linear_input_bytes(), sp = p.sequence_parallel ? tp : 1.0;
  o.saved_bytes = T * h * in / sp             // in_proj input
                  + T * in_width * e          // projection outputs (q, k, v, the gates, β)
                  + T * conv * e              // conv outputs (the scan's q, k, v)
                  + ab + gb                   // T = (I + A)⁻¹ and the decay cumsum (fla saves them)
                  + T * vd * e                // scan output (norm input)
                  + T * vd * in;              // norm output (out_proj input)
  return o;
}

}  // namespace clustersim::models
