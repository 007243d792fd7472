#pragma once
// What an importer makes of a foreign configuration (a Megatron-LM launch script, a torchtitan TOML
// job file, a Hugging Face config.json): scenario keys with their values and where each came from,
// and warnings for what matters but is not modelled. Written out as scenario YAML with one comment
// per key, so a user can see which flag or field gave each value.
#include <string>
#include <vector>

namespace clustersim::scenarios::importers {

struct ImportedKey {
  std::string path;    ///< dotted scenario key, e.g. "parallelism.tp"
  std::string value;   ///< a YAML scalar or flow sequence, written as is
  std::string origin;  ///< where it came from: "--tensor-model-parallel-size 8", "default of Megatron-LM", …
};

struct Imported {
  std::string name;                   ///< scenario name
  std::vector<ImportedKey> keys;      ///< in the order they are written within their section
  std::vector<std::string> warnings;  ///< flags or fields that matter but are not modelled, assumptions made

  /// Sets (or replaces) a key.
  void set(const std::string& path, const std::string& value, const std::string& origin);
  const ImportedKey* find(const std::string& path) const;
  void erase(const std::string& path);
  void warn(std::string message) { warnings.push_back(std::move(message)); }
};

/// The scenario YAML: a header comment (`header`, one line per entry), the name, then the sections
/// model, hardware, cluster, parallelism, training, network in that order, nested keys indented,
/// each key followed by `# origin`. Warnings are listed as comments at the end.
std::string to_yaml(const Imported& imported, const std::vector<std::string>& header);

/// The most layers a model chunk holds under the imported split: the largest parallelism.pp_layers
/// entry when set, else layers over pp·vpp rounded up (the loader's even split).
long long most_chunk_layers(const Imported& imported, long long layers);

/// A double as YAML writes it: integers without a decimal point, others in shortest round-trip form.
std::string yaml_number(double v);
/// A string quoted for YAML when it needs quoting.
std::string yaml_string(const std::string& s);

}  // namespace clustersim::scenarios::importers
