#include "models/detail/block_offload.hpp"

#include "models/memory.hpp"

namespace clustersim::models {

namespace {

double compute_s(const Program& items) {
  double s = 0;
  for (const ProgramItem& it : items)
    if (!it.comm) s += it.seconds;
  return s;
}

}  // namespace

// training.activation_offload_layers: the first N blocks' saved activations go to host memory
// over the GPU's host link while the next block runs its forward, and come back while the block
// after them runs its backward (Transformer Engine's cpu_offload: one copy stream; a block's copy
// is synced before the next block's pass). What a copy takes beyond that compute is exposed; the
// neighbour's compute is taken as the block's own [E]. Host-side overhead for the explainer
// (Ideal::host removes it).
void offload_activations(const ModelSpec& m, const TrainingSpec& t, const ParallelSpec& p, const hardware::GpuSpec& gpu,
                         const topologies::Network& net, BlockProgram* prog) {
  const int n = t.activation_offload_layers;
  if (n <= 0 || t.ideal.host) return;
  const double bytes = estimate_memory_per_stage(m, t, p, gpu).front().block_saved_bytes;
  const double copy = net.host_copy_time(units::Bytes(bytes)).si();
  if (prog->block_kind.empty()) prog->block_kind.assign(static_cast<std::size_t>(m.layers), 0);
  std::vector<int> variant(prog->blocks.size(), -1);
  for (int l = 0; l < n; ++l) {
    int& k = prog->block_kind[static_cast<std::size_t>(l)];
    int& v = variant[static_cast<std::size_t>(k)];
    if (v < 0) {
      UnitProgram u = prog->blocks[static_cast<std::size_t>(k)];
      const double f = compute_s(u.forward), b = compute_s(u.backward) + compute_s(u.weight_grad);
      ProgramWriter fw, bw;
      fw.append(u.forward);
      if (copy > f) fw.compute(copy - f);
      if (copy > b) bw.compute(copy - b), bw.split();
      bw.append(u.backward);
      u.forward = fw.take(), u.backward = bw.take();
      v = int(prog->blocks.size());
      if (!prog->selective_recompute_by_kind.empty()) prog->set_selective_recompute(v, prog->selective_recompute_of(k));
      prog->blocks.push_back(std::move(u));
    }
    k = v;
  }
}

}  // namespace clustersim::models
