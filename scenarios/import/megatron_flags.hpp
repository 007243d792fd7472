#pragma once
// What the Megatron-LM importer knows about pretrain_gpt.py's flags (megatron/training/arguments.py):
// which take no value, which it maps, and which it may ignore because they do not change the speed or
// memory of a training step (learning rate, data paths, logging, checkpoint paths, …).
#include <set>
#include <string>

namespace clustersim::scenarios::importers {

/// Flags declared with action='store_true' (or store_false) that the importer may meet.
const std::set<std::string>& megatron_boolean_flags();
/// Flags declared with nargs='+' or '*' (e.g. --recompute-modules core_attn moe_act).
const std::set<std::string>& megatron_multi_value_flags();
/// Flags the importer turns into scenario keys.
const std::set<std::string>& megatron_mapped_flags();
/// True for flags that do not change a step's speed or memory (optimizer hyper-parameters, data, I/O, logging).
bool megatron_flag_is_irrelevant(const std::string& name);

}  // namespace clustersim::scenarios::importers
