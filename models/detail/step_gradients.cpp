#include "models/detail/step_gradients.hpp"

#include "hardware/kernel_cost.hpp"
#include "models/detail/step_sharding.hpp"

namespace clustersim::models {

// Adam's bytes per parameter: TrainingSpec::adam_traffic_bytes_per_param (34 with an fp32
// master, 16 with BF16 moments and none).

int stage_moe_layers(const ModelSpec& m, const ParallelSpec& p, const std::vector<int>& vlayers, int stage) {
  int n = 0;
  const int vstages = p.pp * p.vpp;
  for (int ch = 0; ch < p.vpp; ++ch) {
    const int vs = ch * p.pp + stage;
    int first = 0;
    for (int u = 0; u < vs; ++u) first += vlayers[static_cast<std::size_t>(u)];
    for (int l = 0; l < vlayers[static_cast<std::size_t>(vs)]; ++l) n += m.moe_layer(first + l) ? 1 : 0;
    if (vs == vstages - 1)
      for (int j = 0; j < m.mtp_layers; ++j) n += m.moe_layer(m.layers + j) ? 1 : 0;
  }
  return n;
}

double stage_optimizer_params(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const StepCosts& c,
                              const std::vector<int>& vlayers, int stage) {
  const ShardingPolicy policy(t, p, t.micro_batches(p));
  const double params = plan_gradients(m, t, p, c, vlayers, stage, 0.0).params;
  const double experts = stage_moe_layers(m, p, vlayers, stage) * expert_layer_params(m, p);
  return policy.local_params(params) + experts / (policy.zero() >= 1 ? p.edp() : 1);
}

double optimizer_update_s(const hardware::GpuSpec& gpu, const StepCosts& c, const TrainingSpec& t, double local_params) {
  return hardware::memory_cost(gpu, units::Bytes(local_params * t.adam_traffic_bytes_per_param())).time.si() + c.step_fixed.time_s;
}

double dense_block_params(const ModelSpec& m, const ParallelSpec& p, const StepCosts& c, const ParamCount& pc,
                          int layer) {
  if (m.hybrid()) return layer_dense_params(m, layer) / p.tp;
  if (!m.is_moe()) return c.layer_params;
  if (!m.moe_layer(layer)) return pc.dense_layer / p.tp;
  return (pc.moe_layer - double(m.moe.experts) * pc.expert) / p.tp;
}

double expert_layer_params(const ModelSpec& m, const ParallelSpec& p) {
  if (!m.is_moe()) return 0;
  return double(m.moe.experts) / p.ep * expert_params(m) / p.etp;
}

GradientPlan plan_gradients(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const StepCosts& c,
                            const std::vector<int>& vlayers, int s, double cap) {
  GradientPlan g;
  const int vstages = p.pp * p.vpp;
  const ParamCount pc = count_params(m, t.seq_len);
  const double h = m.hidden, v = m.padded_vocab(p.tp);
  const double embedding = (v * h + (pc.embedding - double(m.vocab) * h)) / p.tp;
  // Tied embeddings with pp > 1: the last stage keeps its own copy as the LM head (Megatron).
  const double head = (m.tied_embeddings && p.pp == 1 ? 0.0 : v * h / p.tp) + pc.final_norm;
  // MTP modules ride with the LM head: their [2h, h] projection, two norms and block.
  double mtp = 0;
  for (int j = 0; j < m.mtp_layers; ++j)
    mtp += (2.0 * h * h + 2 * norm_params(m, h)) / p.tp + dense_block_params(m, p, c, pc, m.layers + j);
  g.chunk_unit_offset.assign(static_cast<std::size_t>(p.vpp), 0);
  for (int ch = p.vpp - 1; ch >= 0; --ch) {
    const int vs = ch * p.pp + s;
    int first = 0;
    for (int u = 0; u < vs; ++u) first += vlayers[static_cast<std::size_t>(u)];
    g.chunk_unit_offset[static_cast<std::size_t>(ch)] = int(g.unit_params.size());
    if (vs == vstages - 1) g.unit_params.push_back(head + mtp);
    for (int l = vlayers[static_cast<std::size_t>(vs)] - 1; l >= 0; --l)
      g.unit_params.push_back(dense_block_params(m, p, c, pc, first + l));
    if (vs == 0) g.unit_params.push_back(embedding);
  }
  for (double u : g.unit_params) g.params += u;
  g.chunk_bucket_begin.assign(static_cast<std::size_t>(p.vpp), 0);
  g.chunk_bucket_end.assign(static_cast<std::size_t>(p.vpp), 0);
  Bucket cur;
  for (int ch = p.vpp - 1; ch >= 0; --ch) {
    g.chunk_bucket_begin[static_cast<std::size_t>(ch)] = g.buckets.size();
    const int end = ch == 0 ? int(g.unit_params.size()) : g.chunk_unit_offset[static_cast<std::size_t>(ch - 1)];
    for (int u = g.chunk_unit_offset[static_cast<std::size_t>(ch)]; u < end; ++u) {
      cur.params += g.unit_params[static_cast<std::size_t>(u)];
      cur.ready_unit = u;
      if (cur.params >= cap || u + 1 == end) {
        g.buckets.push_back(cur);
        cur = Bucket{};
      }
    }
    g.chunk_bucket_end[static_cast<std::size_t>(ch)] = g.buckets.size();
  }
  g.bucket_of_unit.assign(g.unit_params.size(), 0);
  for (std::size_t bi = 0, u = 0; u < g.unit_params.size(); ++u) {
    while (bi + 1 < g.buckets.size() && int(u) > g.buckets[bi].ready_unit) ++bi;
    g.bucket_of_unit[u] = int(bi);
  }
  return g;
}

int unit_index(const GradientPlan& g, const ParallelSpec& p, const std::vector<int>& vlayers, int s, int chunk,
               int which) {
  const int vs = p.vstage_of(s, chunk);
  const int u = g.chunk_unit_offset[static_cast<std::size_t>(chunk)];
  const bool has_head = vs == p.pp * p.vpp - 1;
  const int layers = vlayers[static_cast<std::size_t>(vs)];
  if (which < 0) return u;
  if (which >= layers) return u + (has_head ? 1 : 0) + layers;
  return u + (has_head ? 1 : 0) + (layers - 1 - which);
}

}  // namespace clustersim::models
