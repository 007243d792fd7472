#pragma once
// Least-squares fit of the hardware profiles' fitted constants to the published runs, with
// leave-one-source-family-out cross-validation (issue #5, issue #13 item 10). The constants
// are a small table of named parameters (fitted_parameters()), so replacing or removing one
// is a one-line edit there; nothing else names them.
#include <map>
#include <string>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "studies/csv_table.hpp"
#include "validation/validation.hpp"

namespace clustersim::studies {

/// A profile constant the calibration fits: a time multiplier whose kernel time scales as
/// 1 / value (a sustained fraction of a measured rate).
struct FittedParameter {
  const char* name;                        ///< the profile key
  double& (*field)(hardware::GpuSpec&);    ///< where the loaded scenario keeps it
  double lo, hi;                           ///< bounds of the fit
  const char* meaning;                     ///< one line for the profile comment
};
/// The fitted parameters, in profile order. Edit here when the set changes.
const std::vector<FittedParameter>& fitted_parameters();

struct HardwareFit {
  std::vector<double> values;  ///< one per fitted_parameters() entry
  int rows = 0;                ///< headline rows on this profile (0: the global values are used)
};

struct FamilyHoldout {
  std::string family;
  std::map<std::string, HardwareFit> fitted_without;  ///< per profile, fitted on the other families
  ErrorStats held_out;                                ///< this family's rows at those values
};

/// What calibrate --write puts into the profiles.
enum class FitMode {
  global,             ///< one value of each parameter for every profile
  per_profile_first,  ///< the first parameter per profile, the others global
  per_profile,        ///< every parameter per profile
};
const char* name(FitMode m);
/// The mode the shipped profiles were written with (tests/validation/VALIDATION.md): the one
/// whose leave-one-family-out error `validate` reports as its out-of-sample figure. With a
/// single fitted parameter, per_profile_first is per_profile.
inline constexpr FitMode kProfilesMode = FitMode::per_profile_first;
/// Headline rows a profile needs for a fitted value of its own; with fewer it takes the global value.
inline constexpr int kMinRowsForOwnFit = 10;

/// One way of fitting: its values, in-sample and leave-one-family-out errors.
struct ModeFit {
  std::map<std::string, HardwareFit> values;  ///< per profile (global values where it has no rows)
  ErrorStats in_sample;                       ///< the tuning rows at these values
  ErrorStats holdout_split;                   ///< the held-out split (holdout_split.hpp) at these values
  std::vector<FamilyHoldout> holdouts;        ///< per family, fitted on the other families' tuning rows
  ErrorStats leave_one_family_out;            ///< every row predicted by a fit that excluded its family
  ErrorStats leave_one_family_out_tuning;     ///< the same, tuning rows only: what best_mode() compares
  std::vector<RowOutcome> held_out_rows;      ///< every row so predicted (id, family, signed error)
};

struct CalibrationResult {
  int rows = 0;          ///< tuning rows: the fits' rows
  int holdout_rows = 0;  ///< headline rows of the held-out split by source and date: never fitted on
  HardwareFit global;            ///< one set for every profile
  ErrorStats at_profiles;        ///< at the profiles' current values
  std::map<FitMode, ModeFit> modes;
  /// The mode with the lowest leave-one-family-out MAPE over the tuning rows (the held-out split
  /// has no say in it): the out-of-sample choice, what `calibrate --write` writes by default.
  FitMode best_mode() const;
};

/// Fits the parameters by minimizing Σ log²(predicted / measured) over the headline rows
/// (simulated, not flagged) whose id starts with `id_prefix` and which are not in the held-out
/// split by source and date (validation/holdout_split.hpp), in every FitMode. Each row is
/// simulated at all parameters 1 and at each parameter 0.5 in turn, and modelled as
/// seconds per token = Σ_k C_k / x_k + B, so the Gauss-Newton fits (Eigen) and the
/// leave-one-family-out refits need no further simulation. Throws ScenarioError when no row
/// can be fitted.
CalibrationResult calibrate(const CsvTable& table, const std::string& id_prefix = "");

/// Fills every family's and the overall `held_out` figures of a validation of the same table
/// and prefix: each family predicted with the constants refitted without it the way the
/// profiles were fitted (kProfilesMode, through the row model of calibrate()). Leaves them
/// empty when nothing can be fitted.
void add_out_of_sample(const CsvTable& table, const std::string& id_prefix, ValidationSummary* summary);

/// Every headline row (id, family, signed tokens/s error) predicted with the constants refitted
/// without its family, the way add_out_of_sample() does; empty when nothing can be fitted.
std::vector<RowOutcome> held_out_rows(const CsvTable& table, const std::string& id_prefix = "");

std::string format_calibration_text(const CalibrationResult& r);

/// When and on what a fit was made, for hardware/fitted.yaml.
struct FitProvenance {
  std::string date;    ///< YYYY-MM-DD
  std::string commit;  ///< the source tree's commit (`git describe --always --dirty`), or "unknown"
  std::string source;  ///< the table fitted on, e.g. data/validation/published.csv
};

/// The text of hardware/fitted.yaml (scenarios/fitted.hpp reads it): the fit of `mode` for every
/// die of `profile_dies` (shipped profile -> die): its own values when its profiles have headline
/// rows (the rows of one die are fitted together), else the global set; with the rows behind each,
/// the leave-one-family-out MAPE of the mode and the provenance. Hand-written profiles are never
/// edited.
std::string fitted_yaml(const CalibrationResult& r, FitMode mode, const std::map<std::string, std::string>& profile_dies,
                        const FitProvenance& provenance);

}  // namespace clustersim::studies
