#pragma once
// The Megatron-Bridge importer's field-by-field rules (megatron_bridge_translate.cpp): each group of
// ConfigContainer fields to the Megatron-LM flags it stands for, Megatron-Bridge's own precision and
// overlap rules first, and the warnings for fields the simulator does not model.
#include <string>

#include "scenarios/import/megatron_bridge_reader.hpp"

namespace clustersim::scenarios::importers::mbridge {

/// The parallel degrees translate_parallelism settled (dp 0: from the GPU count).
struct Layout {
  long long tp = 1, pp = 1, cp = 1, vpp = 1, dp = 0;
};

void translate_vocab(const Reader& r, Translator& t, FlagMap& f);
void translate_model(const Reader& r, Translator& t, FlagMap& f, Imported& out, std::string* geglu_origin);
void translate_moe_mla(const Reader& r, Translator& t, FlagMap& f);
Layout translate_parallelism(const Reader& r, Translator& t, FlagMap& f, long long gpus);
void translate_moe_overlap(const Reader& r, Translator& t, FlagMap& f, Imported& out);
void translate_ddp(const Reader& r, Translator& t, FlagMap& f, const Layout& l);
void translate_precision(const Reader& r, Translator& t, FlagMap& f, Imported& out);
void translate_kernels(const Reader& r, Translator& t);
void translate_training(const Reader& r, Translator& t);
/// Warnings: performance fields set off their default that nothing maps, and fields the file sets
/// that mixed_precision overwrites.
void warn_unmodelled(const Reader& r, Imported& out);
void warn_overwritten_precision(const Reader& r, Imported& out);

}  // namespace clustersim::scenarios::importers::mbridge
