#pragma once
// training.batch_ramp (models::TrainingSpec::BatchRamp).
#include "models/training_spec.hpp"
#include "scenarios/yaml_reader.hpp"

namespace clustersim::scenarios {

/// Reads training.batch_ramp {from, to, tokens} from the `training:` reader `tr`; `t` has its
/// global_batch, micro_batch and tokens read. `to` is the batch after the ramp and must equal
/// training.global_batch; `from` is a multiple of micro_batch × dp below it; `tokens` is positive
/// and no more than training.tokens when that is given.
void read_batch_ramp(const YamlReader& tr, const models::ParallelSpec& p, models::TrainingSpec* t);

}  // namespace clustersim::scenarios
