#pragma once
// The training precision of a published row (dense or MoE table) as scenario YAML: the
// precision and, for FP8, the scaling recipe the row states, else its family's convention.
#include <map>
#include <string>

#include "scenarios/scenario_patch.hpp"
#include "validation/conventions.hpp"
#include "validation/validation.hpp"

namespace clustersim::studies {

/// training.precision (and fp8_recipe, fp8_saved_inputs) lines for the row's `precision` cell.
/// Recipe words in the cell win (rowwise, tensorwise / current scaling / torchao Float8,
/// blockwise, delayed); an FP8 cell without one takes conv.fp8_recipe, else the loader's default
/// (delayed scaling), recorded as an assumption either way.
/// The row's training.precision, fp8_recipe, fp8_saved_inputs and grad_reduce_dtype.
scenarios::ScenarioPatch precision_patch(const std::map<std::string, std::string>& row, const FamilyConventions& conv,
                           RowScenario* out);

}  // namespace clustersim::studies
