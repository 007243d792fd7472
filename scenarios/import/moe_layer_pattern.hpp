#pragma once
// Which layers are MoE, from the forms configs use: Megatron's --moe-layer-freq (an integer k, or a
// Python list expression such as "([0]*3+[1]*58)"), or a per-layer 0/1 list (HF mlp_only_layers etc.).
#include <string>
#include <vector>

namespace clustersim::scenarios::importers {

struct MoeLayerPattern {
  int dense_layers = 0;  ///< leading dense layers
  int frequency = 1;     ///< after them, the last layer of every `frequency` is MoE (ModelSpec::moe_layer)
  std::string note;      ///< set when the pattern is only approximated by (dense_layers, frequency)
};

/// Megatron's --moe-layer-freq for a model of `layers` layers; throws ScenarioError naming `source`.
MoeLayerPattern parse_moe_layer_freq(const std::string& text, int layers, const std::string& source);
/// A per-layer 0/1 list expression as Megatron's moe_freq_type reads it ("([0]*3+[1]*58)", "[1,1,1,0]*3"),
/// for flag `flag` (named in errors with `source`).
std::vector<bool> eval_layer_list(const std::string& text, const std::string& flag, const std::string& source);
/// From a per-layer list, true = MoE.
MoeLayerPattern moe_pattern_of(const std::vector<bool>& is_moe);

}  // namespace clustersim::scenarios::importers
