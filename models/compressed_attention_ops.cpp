#include "models/compressed_attention_ops.hpp"

#include <algorithm>

#include "models/detail/kernel_builder.hpp"
#include "models/flops.hpp"

namespace clustersim::models {

namespace {

// T: the rank's query tokens (its micro-batch share of the sequence under CP); s: the whole
// sequence, which a query's keys and the visible entries are counted over.
struct Dims {
  double T, s, h, d, e, heads, groups, in;
};

// A compressor: wkv and wgate (`width` each) in BF16 (Megatron-Core runs them outside the FP8
// context), then the softmax-gated pool over its tokens, the entries' RMSNorm and RoPE.
void add_compressor(const KernelBuilder& bf16, const Dims& x, const std::string& name, double width, double entry,
                    int ratio, MlaOps* o) {
  bf16.linear(&o->fwd, &o->bwd, name, x.T, 2 * width, x.h);
  const double pool = x.T * 2 * width * x.e + x.T / ratio * entry * x.e;
  o->fwd.add(bf16.memory(name + ".pool", pool));
  o->bwd.add(bf16.memory(name + ".pool.bwd", 2 * pool));
  o->saved_bytes += x.T * 2 * width * x.e + x.T / ratio * entry * x.e;
}

// The lightning indexer of a CSA layer: wq_b from the query latent (FP8), weights_proj and its
// compressor (BF16), the ReLU-weighted scores of every query head against every visible entry
// (fp32 scores), the top-k, and the KL loss against the main attention over the picked entries,
// whose backward (into the indexer only: its inputs are detached) runs inside the forward.
void add_indexer(const KernelBuilder& k, const KernelBuilder& bf16, const ModelSpec& m, const Dims& x, int ratio,
                 MlaOps* o) {
  const CompressedAttentionSpec& c = m.compressed_attention;
  const double HI = c.index_heads, dI = c.index_head_dim, visible = x.s / (2.0 * ratio);
  k.linear(&o->fwd, &o->bwd, "v4.indexer.q", x.T, HI * dI, c.q_lora_rank);
  bf16.linear(&o->fwd, &o->bwd, "v4.indexer.weights", x.T, HI, x.h);
  add_compressor(bf16, x, "v4.indexer.compressor", 2 * dI, dI, ratio, o);
  const double scores = x.T * visible * 4.0, qk = x.T * HI * dI * x.e + x.T / ratio * dI * x.e;
  o->fwd.add(bf16.attention("v4.indexer.scores", 2.0 * x.T * visible * HI * dI, qk + scores, x.s, false));
  o->fwd.add(bf16.memory("v4.indexer.topk", scores));
  const double picked = std::min<double>(c.top_k, visible);
  const double teacher = 2.0 * x.T * picked * x.heads * x.d, student_bwd = 4.0 * x.T * picked * HI * dI;
  o->fwd.add(bf16.attention("v4.indexer.loss", teacher + student_bwd, 2 * qk + x.T * x.heads * x.d * x.e, x.s, true));
  o->saved_bytes += x.T * c.top_k * 4.0;  // the picked entries' indices
}

// The core over window and compressed keys (FlashMLA's sparse forward, cuDNN's sparse backward:
// an attention kernel at the profile's rate for the sequence, as DSA's core), the attention sink
// folded in; heads share the one key/value head, read once per query tile.
void add_core(const KernelBuilder& bf16, const ModelSpec& m, const Dims& x, int ratio, MlaOps* o) {
  const double keys = compressed_mean_keys(m.compressed_attention, x.s, ratio);
  o->attention_flop_fwd = 2.0 * x.T * keys * x.heads * (x.d + x.d);
  const double io = 2 * x.T * x.heads * x.d * x.e + x.T * x.d * x.e * (1.0 + (ratio > 0 ? 1.0 / ratio : 0.0));
  o->fwd.add(bf16.attention("v4.attention", o->attention_flop_fwd, io, x.s, false));
  o->bwd.add(bf16.attention("v4.attention.bwd", 2.5 * o->attention_flop_fwd, 2 * io, x.s, true));
}

// Two mHC sites (before attention, before the MLP): RMS over the streams and the [n·h → (2+n)·n]
// fp32 mapping read the streams, the collapse reads them again and writes the sublayer's input;
// the expansion reads the sublayer's output and the streams and writes the streams (the fused
// kernels of Megatron-Core's hyper_connection.py, one pass each) [E: bytes, not measured].
void add_hyper_connections(const KernelBuilder& bf16, const ModelSpec& m, const Dims& x, MlaOps* o) {
  const HyperConnections& hc = m.hyper_connections;
  if (!hc.enabled()) return;
  const double kept = 2 * x.T * hc.streams * x.h * x.e;  // each site's input streams
  const double n = hc.streams, pre = x.T * (2 * n + 1) * x.h * x.e, post = x.T * (2 * n + 1) * x.h * x.e;
  for (const char* site : {"mhc.attn", "mhc.mlp"}) {
    o->fwd.add(bf16.memory(std::string(site) + ".pre", pre));
    o->fwd.add(bf16.memory(std::string(site) + ".post", post));
    o->bwd.add(bf16.memory(std::string(site) + ".pre.bwd", 2 * pre));
    o->bwd.add(bf16.memory(std::string(site) + ".post.bwd", 2 * post));
  }
  o->saved_bytes += kept, o->saved_bytes_up_proj_recompute += kept, o->hyper_connection_saved = kept;
}

}  // namespace

MlaOps compressed_attention_ops(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                const hardware::GpuSpec& gpu, int ratio) {
  const KernelBuilder k = KernelBuilder::training(gpu, t, p);
  const KernelBuilder lin = KernelBuilder::training(gpu, t.for_module(QuantModule::attention_linears), p);
  const KernelBuilder bf16{gpu, hardware::Precision::bf16, t.ideal};
  const CompressedAttentionSpec& c = m.compressed_attention;
  const double s = t.seq_len, T = t.micro_batch * s / p.cp;
  const Dims x{T,
               s,
               double(m.hidden),
               double(m.head_dim()),
               hardware::storage_bytes(t.precision),
               double(m.heads) / p.tp,
               double(c.o_groups) / p.tp,
               t.saved_linear_input_bytes()};
  MlaOps o;
  lin.linear(&o.fwd, &o.bwd, "v4.q_down", T, c.q_lora_rank, x.h);
  o.fwd.add(k.memory("v4.q_norm", 2 * T * c.q_lora_rank * x.e));
  o.bwd.add(k.memory("v4.q_norm.bwd", 3 * T * c.q_lora_rank * x.e));
  lin.linear(&o.fwd, &o.bwd, "v4.q_up", T, x.heads * x.d, c.q_lora_rank);
  o.fwd.add(k.memory("v4.q_head_norm", 2 * T * x.heads * x.d * x.e));
  o.bwd.add(k.memory("v4.q_head_norm.bwd", 3 * T * x.heads * x.d * x.e));
  lin.linear(&o.fwd, &o.bwd, "v4.kv", T, x.d, x.h);
  o.fwd.add(k.memory("v4.kv_norm", 2 * T * x.d * x.e));
  o.bwd.add(k.memory("v4.kv_norm.bwd", 3 * T * x.d * x.e));
  const double rope = 2 * T * (x.heads + 1) * c.rope_dim * x.e;
  o.fwd.add(k.memory("v4.rotary", rope));
  o.bwd.add(k.memory("v4.rotary.bwd", rope));
  if (ratio > 0) add_compressor(bf16, x, "v4.compressor", (c.indexed(ratio) ? 2 : 1) * x.d, x.d, ratio, &o);
  if (c.indexed(ratio)) add_indexer(k, bf16, m, x, ratio, &o);
  add_core(bf16, m, x, ratio, &o);
  const double unrope = 2 * T * x.heads * c.rope_dim * x.e;  // the output's inverse RoPE
  o.fwd.add(k.memory("v4.out_rotary", unrope));
  o.bwd.add(k.memory("v4.out_rotary.bwd", unrope));
  bf16.linear(&o.fwd, &o.bwd, "v4.o_a", T * x.groups, c.o_lora_rank, x.heads * x.d / x.groups);
  lin.linear(&o.fwd, &o.bwd, "v4.o_b", T, x.h, x.groups * c.o_lora_rank);
  // Kept: the query latent twice (its norm's input, q_up's quantized input), the query heads and
  // the key/value (normed, rotated), the core output (o_a's BF16 input), o_b's input, the
  // log-sum-exp; recomputing the up projections keeps the latent and the core output only.
  const double latent = T * c.q_lora_rank * (x.e + x.in) + T * x.d * x.e;
  const double qkv = T * x.heads * x.d * x.e + 2 * T * x.d * x.e, out = T * x.heads * x.d * x.e;
  const double o_b_in = T * x.groups * c.o_lora_rank * x.in, lse = 4.0 * T * x.heads;
  const double own = o.saved_bytes;  // compressor and indexer
  o.saved_bytes = own + latent + qkv + out + o_b_in + lse;
  o.saved_bytes_up_proj_recompute = own + latent + out + o_b_in + lse;
  add_hyper_connections(bf16, m, x, &o);
  return o;
}

CompressedAttentionKinds compressed_attention_kinds(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p,
                                                    const hardware::GpuSpec& gpu) {
  const CompressedAttentionSpec& c = m.compressed_attention;
  CompressedAttentionKinds k;
  std::array<bool, kCompressedKinds> built{};
  for (int l = 0; l < m.layers + m.mtp_layers; ++l) {
    const auto i = static_cast<std::size_t>(c.kind_of(l));
    if (!built[i]) k.ops[i] = compressed_attention_ops(m, t, p, gpu, c.ratio(l)), built[i] = true;
  }
  return k;
}

}  // namespace clustersim::models
