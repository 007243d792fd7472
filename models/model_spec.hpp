#pragma once
// Architecture of a dense decoder-only Transformer, as written in models/presets/*.yaml.
#include <string>

namespace clustersim::models {

enum class Activation { gelu, swiglu };
enum class Position { learned, rope };

struct ModelSpec {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;      ///< key/value heads (GQA); equals heads for multi-head attention
  int ffn_hidden = 0;    ///< MLP inner width (gate/up width for SwiGLU)
  int vocab = 0;
  Activation activation = Activation::gelu;
  bool tied_embeddings = false;
  Position position = Position::learned;

  int head_dim() const { return hidden / heads; }
  /// Vocabulary as Megatron allocates it: padded up to a multiple of 128·tp
  /// (--make-vocab-size-divisible-by 128, times the TP size) so each TP rank gets equal rows.
  int padded_vocab(int tp) const {
    const int multiple = 128 * tp;
    return (vocab + multiple - 1) / multiple * multiple;
  }
  /// GELU models (GPT-2/3 style) carry biases and LayerNorm; SwiGLU models (Llama) neither.
  bool has_bias() const { return activation == Activation::gelu; }
};

/// Parameter counts (embeddings included; learned position table sized for `seq_len`).
struct ParamCount {
  double per_layer = 0;       ///< one Transformer block
  double embedding = 0;       ///< token (+ learned position) embedding
  double lm_head = 0;         ///< separate output projection (0 when tied)
  double final_norm = 0;
  double total = 0;
  double non_embedding = 0;   ///< total − token/position embedding − untied head
  double matmul = 0;          ///< weights used in matrix multiplies, LM head included
};

ParamCount count_params(const ModelSpec& m, int seq_len);

}  // namespace clustersim::models
