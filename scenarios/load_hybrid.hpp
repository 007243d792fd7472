#pragma once
// The hybrid-stack keys of `model:` — model.layer_pattern and model.mamba (models::LayerKind,
// models::MambaSpec).
#include <string>
#include <vector>

#include "models/model_spec.hpp"
#include "scenarios/yaml_reader.hpp"

namespace clustersim::scenarios {

/// A Nemotron-H pattern string (Megatron --hybrid-override-pattern, HF hybrid_override_pattern):
/// one character per layer, M = Mamba-2 mixer, * = attention, - = dense MLP, E = MoE MLP, each
/// a layer of its own. Empty result and `*error` set on a character outside those four.
std::vector<models::LayerKind> parse_layer_pattern(const std::string& text, std::string* error);

/// One list entry or short-form name: mamba, attention, mlp, moe, or a mixer and an MLP joined by
/// '+' (attention+mlp, attention+moe, mamba+mlp, mamba+moe); a single pattern character too.
bool parse_layer_name(const std::string& name, models::LayerKind* out);

/// Reads model.layer_pattern and model.mamba into `m` (its layers, moe and mla already read)
/// and checks them against each other: pattern length = layers, a Mamba layer needs model.mamba,
/// an MoE layer model.moe (and model.moe's dense_layers / frequency are not given with a
/// pattern), model.mamba needs a Mamba layer.
void read_hybrid(const YamlReader& r, models::ModelSpec* m);

}  // namespace clustersim::scenarios
