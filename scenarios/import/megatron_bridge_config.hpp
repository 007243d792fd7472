#pragma once
// What the Megatron-Bridge importer (megatron_bridge.cpp) knows about a ConfigContainer
// (src/megatron/bridge/training/config.py): its fields by dotted path ("model.num_layers"), which of
// them it maps, which cannot change a step's speed or memory, and the defaults of the rest (a field
// that is neither mapped nor ignored is warned when its value is not its default); the mixed-precision
// recipes (training/mixed_precision.py); and the training recipes whose values an override file is
// merged onto (megatron_bridge_recipes.cpp).
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace clustersim::scenarios::importers::mbridge {

/// How the importer treats a field.
enum class FieldUse {
  mapped,   ///< becomes a scenario key (through the Megatron-LM flag it stands for)
  ignored,  ///< cannot change a step's speed or memory (paths, logging, seeds, initialisation, numerics)
  known,    ///< changes a step but is not modelled: warned when not `default_text`
};

struct FieldInfo {
  FieldUse use;
  const char* default_text = "";  ///< for `known`: the default, as normalized_text() writes it
};

/// What the importer knows about `path` ("section.field"); nullptr for a field it does not know
/// (warned whatever its value).
const FieldInfo* field_info(const std::string& path);

/// Top-level sections the importer reads field by field.
bool is_read_section(const std::string& section);
/// Top-level sections that cannot change a step (logger, checkpoint, scheduler, rng, profiling, …).
bool is_ignored_section(const std::string& section);

/// The fields a mixed-precision recipe sets (bf16_mixed, bf16_with_fp8_current_scaling_mixed, …; '-'
/// read as '_'), as "field: value" YAML flow mapping text; empty for an unknown name.
std::string mixed_precision_recipe(const std::string& name);
/// The names mixed_precision_recipe() knows, for messages.
std::string mixed_precision_recipe_names();
/// MixedPrecisionConfig's default of `field`, for a mixed_precision mapping that leaves it out.
std::string mixed_precision_default(const std::string& field);

/// A training recipe an override file is merged onto (`--recipe`): the values its function sets, as
/// ConfigContainer YAML, and its pipeline layouts by (pp, vpp) where the recipe picks the layout from them.
struct TrainingRecipe {
  const char* name;
  const char* source;  ///< the upstream function, file and commit the values were read from
  const char* yaml;
  std::map<std::pair<long long, long long>, const char*> layouts;  ///< (pp, vpp) -> layout; "" = none
};
const std::vector<TrainingRecipe>& training_recipes();
const TrainingRecipe* find_training_recipe(const std::string& name);

}  // namespace clustersim::scenarios::importers::mbridge
