// A Megatron-Bridge ConfigContainer as YAML -> scenario keys. The file is what a Megatron-Bridge run
// reads or writes: the run_config.yaml a checkpoint holds (ConfigContainer.to_yaml: every field, with
// `_target_` entries for classes, functions, dtypes and enums), or an override file that a recipe's
// ConfigContainer is merged with (OmegaConf.merge in process_config_with_overrides; `--recipe NAME`
// supplies the recipe's values, megatron_bridge_recipes.cpp). Each field the simulator models is
// translated to the Megatron-LM flag it stands for (the correspondence of Megatron-Bridge's own
// scripts/translate_mlm_to_bridge.py) and mapped by the Megatron-LM importer's code
// (megatron_mapping.hpp), with the field, its line and value as the key's comment. Megatron-Bridge's
// own rules are applied first: a mixed_precision recipe overwrites the model's and DDP's precision fields
// (mixed_precision.py update_config_with_precision_overrides), a comm_overlap section decides the P2P,
// TP, MoE and data-parallel overlaps (comm_overlap.py CommOverlapConfig.setup), and defaults are the
// dataclasses' (GPTModelProvider, TransformerConfig, DistributedDataParallelConfig, MixedPrecisionConfig).
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "scenarios/error.hpp"
#include "scenarios/import/flag_map.hpp"
#include "scenarios/import/importers.hpp"
#include "scenarios/import/megatron_bridge_config.hpp"
#include "scenarios/import/megatron_bridge_translate.hpp"
#include "scenarios/import/megatron_mapping.hpp"
#include "scenarios/load_model.hpp"
#include "scenarios/preset_catalog.hpp"

namespace clustersim::scenarios::importers {
namespace mbridge {

// The model preset whose spec the imported model section is, if any.
std::string matching_preset(const Imported& imported) {
  Imported model;
  for (const auto& k : imported.keys)
    if (k.path.rfind("model.", 0) == 0) model.keys.push_back(k);
  model.name = "imported";
  try {
    const YAML::Node root = YAML::Load(to_yaml(model, {}));
    auto source = [](const std::string&) { return std::string("<imported>"); };
    const models::ModelSpec mine = read_model(YamlReader(root["model"], "model", source, nullptr), "imported");
    for (const auto& p : list_presets("models")) {
      models::ModelSpec preset = model_preset(p.name);
      preset.name = mine.name;
      if (preset == mine) return p.name;
    }
  } catch (const ScenarioError&) {
    // The loader will say what is wrong with the model section when the scenario is read.
  }
  return "";
}

// GPUs: --gpus, else the data-parallel size a run records in comm_overlap times the model-parallel size.
long long gpu_count(const Reader& r, std::string* origin) {
  if (r.options().gpus > 0) {
    *origin = "--gpus on the import command line";
    return r.options().gpus;
  }
  if (auto dp = r.integer("comm_overlap.data_parallel_size"); dp && *dp > 0) {
    *origin = r.origin("comm_overlap.data_parallel_size") + " x tp x pp x cp";
    return *dp * r.positive("model.tensor_model_parallel_size", 1) *
           r.positive("model.pipeline_model_parallel_size", 1) * r.positive("model.context_parallel_size", 1);
  }
  throw ScenarioError(
      format("{}: the GPU count is not in a ConfigContainer (torchrun's --nnodes x --nproc-per-node sets it); "
             "give it with `clustersim import megatron-bridge --gpus N`",
             r.options().source));
}

// A model section that is a shipped preset's is written as the preset's name.
void use_matching_preset(const Reader& r, Imported& out) {
  const std::string preset = matching_preset(out);
  if (preset.empty()) return;
  const std::string where = r.origin("model.num_layers");
  for (auto it = out.keys.begin(); it != out.keys.end();)
    it = it->path.rfind("model.", 0) == 0 ? out.keys.erase(it) : std::next(it);
  out.keys.insert(out.keys.begin(),
                  {"model", preset, format("{}, …: the model's fields are exactly this preset's shape", where)});
}

}  // namespace mbridge

Imported import_megatron_bridge(const std::string& text, const ImportOptions& opt) {
  using namespace mbridge;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ScenarioError(format("{}:{}:{}: not YAML: {}", opt.source, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  if (!root.IsMap())
    throw ScenarioError(
        format("{}:{}: expected a mapping of ConfigContainer sections (model:, train:, mixed_precision:, …), found {}",
               opt.source, root.IsNull() ? 1 : root.Mark().line + 1, node_kind(root)));
  Imported out;
  out.name = format("{} (imported from a Megatron-Bridge ConfigContainer)", opt.source);
  Reader r(opt, out);
  const TrainingRecipe* recipe = nullptr;
  if (!opt.recipe.empty()) {
    recipe = find_training_recipe(opt.recipe);
    if (!recipe) {
      std::string known;
      for (const auto& rec : training_recipes()) known += (known.empty() ? "" : ", ") + std::string(rec.name);
      throw ScenarioError(format("--recipe {}: not a recipe the importer knows; known: {}", opt.recipe, known));
    }
    r.read(YAML::Load(recipe->yaml), false, recipe->name);
    out.warn(
        format("the file is merged onto recipe {}: its values are those of {}; check them against the Megatron-Bridge "
               "version you run",
               recipe->name, recipe->source));
  }
  r.read(root, true, "");
  r.expand_precision_recipe();
  if (recipe) r.apply_recipe_layout(*recipe);

  FlagMap f(opt.source);
  Translator t(r, f);
  std::string geglu_origin;
  translate_model(r, t, f, out, &geglu_origin);
  translate_vocab(r, t, f);
  translate_moe_mla(r, t, f);
  std::string gpus_origin;
  const long long gpus = gpu_count(r, &gpus_origin);
  const Layout layout = translate_parallelism(r, t, f, gpus);
  translate_moe_overlap(r, t, f, out);
  translate_ddp(r, t, f, layout);
  translate_precision(r, t, f, out);
  translate_kernels(r, t);
  translate_training(r, t);

  const long long layers = import_megatron_model(out, f, opt);
  if (!geglu_origin.empty()) out.set("model.activation", "geglu", geglu_origin);
  out.set("hardware", opt.hardware.empty() ? "h100-sxm" : opt.hardware,
          opt.hardware.empty() ? "assumed: a ConfigContainer does not name the GPU (clustersim import --hardware)"
                               : "--hardware on the import command line");
  if (opt.hardware.empty()) out.warn("hardware not given: assumed h100-sxm (pass --hardware NAME or a profile file)");
  out.set("cluster.gpus", format("{}", gpus), gpus_origin);
  if (opt.gpus_per_node > 0)
    out.set("cluster.gpus_per_node", format("{}", opt.gpus_per_node),
            "--gpus-per-node on the import command line (the NVLink domain)");
  import_megatron_parallelism(out, f, layers, opt.gpus_per_node);
  import_megatron_training(out, f, gpus);
  warn_unmodelled(r, out);
  warn_overwritten_precision(r, out);

  use_matching_preset(r, out);
  return out;
}

}  // namespace clustersim::scenarios::importers
