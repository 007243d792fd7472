#include "scenarios/load_offload.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace clustersim::scenarios {

void read_activation_offload(const YamlReader& tr, const models::ModelSpec& m, const models::ParallelSpec& p,
                             models::TrainingSpec* t) {
  const char* key = "activation_offload_layers";
  if (!tr.has(key)) return;
  t->activation_offload_layers = tr.integer(key, 0, 0, std::max(0, m.layers - 1));
  if (t->activation_offload_layers == 0) return;
  if (p.pp > 1)
    tr.fail(key, fmt::format("needs parallelism.pp: 1 (here {}): Megatron-Core has no activation offloading with "
                             "pipeline parallelism", p.pp));
  if (t->recompute != models::Recompute::none)
    tr.fail(key, fmt::format("needs recompute: none (here {}): Megatron-Core does not offload with activation "
                             "recomputation", models::name(t->recompute)));
  if (t->cuda_graphs || t->cuda_graph_scope != 0)
    tr.fail(key, "cannot run with CUDA graphs (cuda_graphs / cuda_graph_scope): Megatron-Core forbids the pair");
}

void read_activation_fp8_input_store(const YamlReader& tr, const models::ModelSpec& m, models::TrainingSpec* t) {
  const char* key = "activation_fp8_input_store";
  t->activation_fp8_input_store = tr.boolean(key, false);
  if (t->activation_fp8_input_store && m.activation != models::Activation::swiglu)
    tr.fail(key, fmt::format("applies to SwiGLU MLPs only (model.activation here: {})",
                             models::name_in(models::kActivationNames, m.activation)));
}

}  // namespace clustersim::scenarios
