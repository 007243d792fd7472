#pragma once
// The Mixture-of-Experts keys of a scenario: parallelism.ep / etp (experts folded over the
// attention ranks of each pipeline stage) and training.moe_dispatcher, moe_load_imbalance,
// moe_a2a_overlap, recompute_modules (docs/moe.md). Called after dp and training.recompute are read.
#include "scenarios/scenario.hpp"
#include "scenarios/yaml_reader.hpp"

namespace clustersim::scenarios {

/// ep (default 1) and etp (default tp, Megatron-LM arguments.py: "if
/// args.expert_tensor_parallel_size is None: args.expert_tensor_parallel_size =
/// args.tensor_model_parallel_size"); derives edp = tp·cp·dp / (etp·ep).
void read_moe_parallel(const YamlReader& par, Scenario* sc);

void read_moe_training(const YamlReader& tr, Scenario* sc);

}  // namespace clustersim::scenarios
