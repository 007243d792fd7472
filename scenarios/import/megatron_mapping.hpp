#pragma once
// The mapping of Megatron-LM's pretrain_gpt.py flags to scenario keys, shared by the importers whose
// input names the same settings: Megatron-LM launch scripts (megatron.cpp) and Megatron-Bridge
// ConfigContainer YAML (megatron_bridge.cpp, which translates each field to the flag it stands for).
// Each reads a FlagMap; a flag's origin, label and reason for being absent (FlagMap::set,
// FlagMap::explain_absent) become the keys' comments and the warnings' names.
#include <string>

#include "scenarios/import/flag_map.hpp"
#include "scenarios/import/importers.hpp"

namespace clustersim::scenarios::importers {

/// The vocabulary of a tokenizer known by its type or model name (GPT-2 BPE, Llama 2 and 3, DeepSeek-V3),
/// else 0.
int known_tokenizer_vocab(const std::string& type, const std::string& model);
/// The model section: shape, attention, MoE, MLA, MTP, sliding window. Returns the layer count.
long long import_megatron_model(Imported& out, const FlagMap& f, const ImportOptions& opt);
/// The parallelism section (tp, pp, cp, ep, etp, vpp, pp_layers, ZeRO stage, overlaps).
void import_megatron_parallelism(Imported& out, const FlagMap& f, long long layers, long long gpus_per_node);
/// The training section (batch, precision, recompute, kernels, MoE exchange, tokens).
void import_megatron_training(Imported& out, const FlagMap& f, long long gpus);

}  // namespace clustersim::scenarios::importers
