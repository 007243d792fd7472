#pragma once
// Importers of the configurations users already have, each producing scenario keys (Imported):
//   Megatron-LM / Megatron-Core pretrain_gpt.py arguments (a launch script or an argument file),
//   a Megatron-Bridge ConfigContainer YAML (a run's run_config.yaml, or an override file with its recipe),
//   a torchtitan job TOML, a Hugging Face config.json (the model section only).
// Each throws ScenarioError naming the file and the field when the input cannot be read, and warns
// (Imported::warnings) about every flag or field that matters but is not modelled.
#include <string>

#include "scenarios/import/imported.hpp"

namespace clustersim::scenarios::importers {

struct ImportOptions {
  std::string source = "<input>";  ///< file name, for messages and the header
  int gpus = 0;                    ///< total GPUs; 0 = from the input (WORLD_SIZE, --nnodes x --nproc-per-node, …)
  int gpus_per_node = 0;           ///< GPUs per NVLink domain; 0 = the launcher's GPUs per host (or the profile's)
  std::string hardware;            ///< hardware profile or file; empty = the importer's documented default
  int vocab = 0;                   ///< vocabulary size when the input only names a tokenizer file
  std::string recipe;              ///< megatron-bridge: the training recipe an override file is merged onto
};

Imported import_megatron(const std::string& text, const ImportOptions& options);
Imported import_megatron_bridge(const std::string& text, const ImportOptions& options);
Imported import_torchtitan(const std::string& text, const ImportOptions& options);
Imported import_hf(const std::string& text, const ImportOptions& options);

}  // namespace clustersim::scenarios::importers
