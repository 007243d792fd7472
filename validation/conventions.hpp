#pragma once
// How each source family's software ran where a published row leaves a field blank, read from
// data/validation/family_conventions.csv (one cited line per convention: family, key, value,
// source). A family ending in '*' matches every family with that prefix; several families of
// one source are separated by '|' (MBRIDGE|DENSE-MBRIDGE). Every use is
// recorded as an assumption on the row.
#include <string>
#include <vector>

namespace clustersim::studies {

struct FamilyConventions {
  bool flash_attention = true;             ///< FlashAttention-style fused attention
  std::string attention_impl;              ///< the kernel the stack calls (training.attention_impl); "" = the profile's default
  std::string recompute = "none";
  /// What a row's "selective" recompute means: attention_core (Megatron's selective recompute)
  /// or fewest_blocks_that_fit (whole blocks fully recomputed, as fms-fsdp's
  /// selective_checkpointing: the fewest per pipeline stage with which the row fits in HBM).
  std::string selective_recompute = "attention_core";
  int zero_stage = 0;                      ///< when the row's optimizer sharding is blank
  bool sequence_parallel_with_tp = false;  ///< Megatron SP on whenever tp > 1
  bool tp_comm_overlap = false;            ///< TE userbuffers overlap of TP collectives with GEMMs
  std::string fp8_recipe;                  ///< FP8 scaling when the row names none; "" = the loader's default
  std::string fp8_saved_inputs;            ///< what a low-precision linear keeps for wgrad; "" = the loader's default
  std::string grad_reduce_dtype;           ///< the gradient buffer's type (fp32 | bf16); "" = the loader's default
  std::string optimizer_dtype;             ///< master weights and Adam moments (fp32 | bf16); "" = the loader's default
  std::string cross_entropy;               ///< the loss kernel (fp32 | fused); "" = the loader's default
  // MoE rows (published_moe.csv) where the row leaves them blank:
  std::string moe_dispatcher = "alltoall";  ///< alltoall | allgather | deepep | hybridep
  std::string moe_load_imbalance = "auto";  ///< auto | a number >= 1 (1: force-balanced routing)
  std::string moe_permute_fusion;  ///< Transformer Engine's fused permute (true | false); "" = the loader's default
  std::string placement;                    ///< rank order innermost first, e.g. "tp,cp,dp,pp"; "" = the default
};

/// One line of the conventions file.
struct Convention {
  std::string family, key, value, source;
};

/// Parses the conventions CSV text; throws scenarios::ScenarioError naming `source_name`:line,
/// the key and what is allowed when a line is malformed.
std::vector<Convention> parse_conventions(const std::string& text, const std::string& source_name);
/// The compiled-in data/validation/family_conventions.csv, parsed once.
const std::vector<Convention>& default_conventions();
/// The conventions that apply to `family`.
FamilyConventions conventions_for(const std::string& family, const std::vector<Convention>& table = default_conventions());

/// The published table's path in the source tree (what `validate` and `calibrate` name as their
/// default source).
inline constexpr const char* kPublishedCsvPath = "data/validation/published.csv";
/// The compiled-in data files (generated from data/validation/).
const char* published_csv_text();
const char* family_conventions_text();
const char* published_moe_csv_text();  ///< data/validation/published_moe.csv
const char* source_dates_text();       ///< data/validation/source_dates.csv
const char* holdout_split_text();      ///< data/validation/holdout_split.csv
const char* row_recipes_text();        ///< data/validation/row_recipes.csv

}  // namespace clustersim::studies
