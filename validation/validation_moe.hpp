#pragma once
// The Mixture-of-Experts rows of a published-runs table (data/validation/published_moe.csv,
// docs/reference/validation/README_moe.md): architecture, expert parallelism, dispatcher, routing
// balance and recompute modules in the issue-15 scenario contract, and which release of a
// configuration is the figure of record.
#include <array>
#include <map>
#include <string>
#include <vector>

#include "validation/conventions.hpp"
#include "studies/csv_table.hpp"
#include "validation/validation.hpp"

namespace clustersim::studies {

/// A row with more than one routed expert, or from an MOE-* source.
bool is_moe_row(const std::map<std::string, std::string>& row);

/// The model: section of an MoE row; false with out->reason when the row is outside the contract
/// (hybrid Mamba, compressed/sparse attention, latent MoE, incomplete architecture).
bool moe_model_patch(const std::map<std::string, std::string>& row, RowScenario* out, scenarios::ScenarioPatch* model,
                     long* layers);

/// parallelism.ep / etp.
scenarios::ScenarioPatch moe_parallel_patch(const std::map<std::string, std::string>& row, RowScenario* out);

/// training.moe_dispatcher, moe_load_imbalance, moe_a2a_overlap and the host recipe's keys.
scenarios::ScenarioPatch moe_training_patch(const std::map<std::string, std::string>& row, const FamilyConventions& conv,
                                            RowScenario* out);

/// Megatron recompute_modules of the row ("selective: mla_up_proj" → {mla_up_proj}); empty when none.
/// A row with recompute blank takes its release's recipe modules (recipe_recompute_modules).
std::vector<std::string> moe_recompute_modules(const std::map<std::string, std::string>& row);

/// The recompute of the benchmark recipe in force for a row that leaves recompute blank, where the
/// release's recipe is known (Megatron-Bridge DeepSeek-V3, NeMo AutoModel); mode "" otherwise.
struct RecipeRecompute {
  std::string mode;                  ///< "selective" or "full"
  std::vector<std::string> modules;  ///< Megatron recompute_modules when selective
  std::string source;
};
RecipeRecompute recipe_recompute(const std::map<std::string, std::string>& row);

/// An MoE row of a versioned source: its configuration (source family, model, GPU, GPU count,
/// precision, sequence length, global batch) and its release, the container version "YY.MM[.PP]"
/// in the framework column, and its published layout (tp, pp, ep, cp, vpp, micro-batch), which a
/// release's recipe may change. Rows without a release are left out.
struct ReleasedRow {
  std::string id;
  std::string configuration;  ///< the grouping key
  std::string label;          ///< the configuration for a reader: "model, 16 x GPU, fp8, seq 4096, batch 512"
  std::string layout;         ///< "tp1 pp1 ep8 cp1 vpp mb4"
  std::array<int, 3> release{};
};
std::vector<ReleasedRow> released_rows(const CsvTable& table);

/// Rows whose configuration a later release of the same source republished (README_moe caveat 2:
/// the latest release is the figure of record): id → the id of the row that supersedes it.
/// A configuration is (source family, model, GPU, GPU count, precision, sequence length, global
/// batch); the release is the container version "YY.MM[.PP]" in the framework column.
std::map<std::string, std::string> superseded_rows(const CsvTable& table);
/// The same from the table's released_rows.
std::map<std::string, std::string> superseded_rows(const std::vector<ReleasedRow>& released);

}  // namespace clustersim::studies
