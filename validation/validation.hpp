#pragma once
// Validation against published training runs (data/validation/published.csv): each row becomes
// a scenario through the same loader and checks as a user's YAML, is simulated, and its
// predicted tokens/s per GPU is compared with the measured one.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/scenario_patch.hpp"
#include "studies/csv_table.hpp"

namespace clustersim::studies {

/// One published row turned into a scenario (a patch of an empty one, loaded with
/// scenarios::load_scenario), or the reason it cannot be.
struct RowScenario {
  scenarios::ScenarioPatch scenario;     ///< empty when `reason` is set
  std::string reason;                    ///< why the row cannot be simulated
  std::vector<std::string> flags;        ///< why it stays out of the headline figures
  std::vector<std::string> assumptions;  ///< fields the source leaves blank that we filled
};

struct RowOutcome {
  std::string id;
  std::string family;        ///< id prefix: the source group
  std::string model_name;
  std::string gpu_type;
  std::string layout;        ///< "tp4 pp8 cp1 dp2" etc., as published
  double measured_tps_gpu = 0;  ///< 0 when the source gives none
  bool simulated = false;
  std::string reason;        ///< set when not simulated
  double predicted_tps_gpu = 0;
  double predicted_mfu = 0;  ///< clustersim's own MFU (megatron formula, precision peak)
  double error = 0;          ///< signed relative error (predicted − measured) / measured
  bool fits_memory = true;
  std::vector<std::string> flags;
  std::vector<std::string> assumptions;
  bool holdout = false;      ///< in the held-out split by source and date (holdout_split.hpp): never fitted on
  bool headline() const { return simulated && flags.empty(); }
};

/// Error statistics over a set of simulated rows (absolute percentage errors).
struct ErrorStats {
  int count = 0;
  double mape = 0;        ///< mean |error|
  double bias = 0;        ///< mean signed error: + = predicted faster than measured
  double median_abs = 0;  ///< median |error|
  double worst = 0;       ///< the signed error of largest magnitude
  std::string worst_id;
};

struct FamilySummary {
  std::string family;
  int rows = 0;            ///< all rows of the family
  int simulated = 0;       ///< simulated, headline or flagged
  ErrorStats headline;     ///< simulated and not flagged
  ErrorStats flagged;      ///< simulated but flagged (shown, not in headline)
  /// Out of sample: the headline rows predicted with the fitted profile constants refitted
  /// without this family (for `overall`: every family so predicted). Empty when not computed
  /// or when no other family is left to fit on.
  std::optional<ErrorStats> held_out;
};

/// How far one published configuration's measured throughput moves from release to release
/// (release_spread.hpp): the part of the error that the software release, not the configuration,
/// explains.
struct ReleaseSpread {
  /// Jobs (model, GPU type and count, precision, sequence, batch) published with the same layout
  /// (tp, pp, ep, cp, vpp, micro-batch) by at least two releases, each with a simulated, measured row.
  int configurations = 0;
  int rows = 0;               ///< their simulated, measured rows, every release
  double median_ratio = 1;    ///< median over configurations of fastest / slowest release (measured)
  int over_20_percent = 0;    ///< configurations whose fastest release is over 1.2x the slowest
  double widest_ratio = 1;
  std::string widest_configuration;  ///< "model, GPUs x GPU, precision, seq, batch, layout"
  /// Each row "predicted" by the geometric mean of its configuration's measurements over the
  /// releases: what a prediction that knows the configuration but not the release would miss by.
  double release_blind_mape = 0;
  double simulator_mape = 0;  ///< the simulator's MAPE on the same rows
};

/// The same published job run on two GPU types (hardware_pairs.hpp): one source, one release,
/// one model, GPU count, precision, sequence, batch and layout; only the GPU differs.
struct HardwarePair {
  std::string a_id, b_id;  ///< rows; a's GPU type sorts after b's (the ratio is a over b)
  std::string a_gpu, b_gpu;
  std::string job;             ///< "model, N GPUs, precision, seq, batch, layout, release"
  double measured_ratio = 0;   ///< a's measured tokens/s per GPU over b's
  double predicted_ratio = 0;  ///< the same from the simulator
  double error() const { return predicted_ratio / measured_ratio - 1; }
};

struct HardwarePairClass {
  std::string gpus;  ///< "A/B"
  int count = 0;
  double mean_error = 0;  ///< mean signed ratio error: + = the simulator favours A more than measured
  double mape = 0;
};

struct HardwarePairs {
  std::vector<HardwarePair> pairs;         ///< ordered by class, then job
  std::vector<HardwarePairClass> classes;  ///< ordered by GPU pair
  double mape = 0;                         ///< over every pair
};

struct ValidationSummary {
  std::vector<RowOutcome> rows;
  std::vector<FamilySummary> families;  ///< sorted by family name
  FamilySummary overall;
  std::string held_out_mode;  ///< the calibration mode whose refits gave held_out (FitMode name)
  std::vector<RowOutcome> held_out_rows;  ///< each headline row predicted without its family (add_out_of_sample)
  /// The headline rows of the held-out split by source and date (holdout_split.hpp) at the shipped
  /// constants, which were fitted without them: the first out-of-sample figure. Empty when the
  /// table has no such row.
  std::optional<ErrorStats> holdout_split;
  std::string holdout_rule;  ///< what the split holds (holdout_description of its first row)
  std::optional<ReleaseSpread> release_spread;  ///< configurations republished by later releases
  std::optional<HardwarePairs> hardware_pairs;  ///< jobs published on two GPU types
};

/// The id prefix (everything before the last '-').
std::string family_of(const std::string& id);

/// Builds the scenario of one CSV row (column name → field).
RowScenario row_scenario(const std::map<std::string, std::string>& row);

/// Converts, loads, simulates and compares one row. Never throws for a bad row: the loader's
/// message becomes the reason.
RowOutcome validate_row(const std::map<std::string, std::string>& row);

/// Validates every row whose id starts with `id_prefix` (all when empty) and summarizes.
ValidationSummary validate_table(const CsvTable& table, const std::string& id_prefix = "");

ErrorStats error_stats(const std::vector<const RowOutcome*>& rows);

}  // namespace clustersim::studies
