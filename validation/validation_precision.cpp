#include "validation/validation_precision.hpp"

#include <fmt/format.h>

#include "validation/validation_row.hpp"

namespace clustersim::studies {
namespace {

using namespace row_cells;

// The FP8 scaling recipe a precision cell names; "" when it names none.
std::string stated_fp8_recipe(const std::string& p) {
  if (contains(p, "blockwise") || contains(p, "block scaling")) return "blockwise";
  if (contains(p, "rowwise")) return "rowwise";
  // torchao's Float8Linear scales per tensor, dynamically, unless a recipe is named (torchao
  // float8_scaling_utils.py hp_tensor_to_float8_dynamic: scaling_granularity defaults to TENSORWISE).
  if (contains(p, "tensorwise") || contains(p, "current") || contains(p, "torchao float8")) return "tensorwise";
  if (contains(p, "delayed")) return "delayed";
  return "";
}

// The fp8_recipe of an FP8 row: the recipe the cell names, else the family's, else none (the
// loader's default, delayed scaling: ""); the assumption recorded when the cell names none.
std::string fp8_recipe_of(const std::string& p, const FamilyConventions& conv, RowScenario* out) {
  std::string recipe = stated_fp8_recipe(p);
  if (!recipe.empty()) return recipe;
  if (conv.fp8_recipe.empty()) {
    out->assumptions.push_back("FP8 scaling recipe not stated: delayed (Transformer Engine's and Megatron-LM's default)");
    return "";
  }
  out->assumptions.push_back(fmt::format("FP8 scaling recipe not stated: {} (the stack's)", conv.fp8_recipe));
  return conv.fp8_recipe;
}

}  // namespace

scenarios::ScenarioPatch precision_patch(const Row& r, const FamilyConventions& conv, RowScenario* out) {
  const std::string p = field(r, "precision");
  std::string name = "bf16", recipe;
  if (contains(p, "nvfp4")) name = "nvfp4";
  else if (contains(p, "mxfp8")) name = "mxfp8";
  else if (contains(p, "fp8")) name = "fp8", recipe = fp8_recipe_of(p, conv, out);
  else if (contains(p, "fp16") && !contains(p, "bf16")) name = "fp16";
  else if (!contains(p, "bf16")) out->assumptions.push_back("precision not stated: bf16");
  scenarios::ScenarioPatch y;
  y.set("training.precision", name);
  if (!recipe.empty()) y.set("training.fp8_recipe", recipe);
  const bool low = name == "fp8" || name == "mxfp8" || name == "nvfp4";
  if (low && !conv.fp8_saved_inputs.empty()) y.set("training.fp8_saved_inputs", conv.fp8_saved_inputs);
  if (name != "fp16" && !conv.grad_reduce_dtype.empty()) {
    y.set("training.grad_reduce_dtype", conv.grad_reduce_dtype);
    out->assumptions.push_back(fmt::format("gradients reduced in {} (the stack's benchmark recipes)", conv.grad_reduce_dtype));
  }
  if (name != "fp16" && !conv.optimizer_dtype.empty() && conv.optimizer_dtype != "fp32") {
    y.set("training.optimizer_dtype", conv.optimizer_dtype);
    out->assumptions.push_back(fmt::format("optimizer state in {} with no fp32 master (the stack's default)", conv.optimizer_dtype));
  }
  if (contains(p, "routed-expert grouped GEMMs"))
    out->assumptions.push_back("MXFP8 on every GEMM (the source applies it to the routed experts and most linears)");
  return y;
}

}  // namespace clustersim::studies
