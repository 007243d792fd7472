#pragma once
// Least-squares fit of the hardware profiles' calibration constants (gemm_sustained_fraction,
// attention_sustained_fraction) to the published runs, with leave-one-source-family-out
// cross-validation (issue #5).
#include <map>
#include <string>
#include <vector>

#include "tools/csv_table.hpp"
#include "tools/validation.hpp"

namespace clustersim::tools {

struct HardwareFit {
  double gemm = 1;       ///< fitted gemm_sustained_fraction
  double attention = 1;  ///< fitted attention_sustained_fraction
  int rows = 0;          ///< headline rows on this profile (0: the global values are used)
};

struct FamilyHoldout {
  std::string family;
  std::map<std::string, HardwareFit> fitted_without;  ///< per profile, fitted on the other families
  ErrorStats held_out;                                ///< this family's rows at those values
};

/// What calibrate --write puts into the profiles.
enum class FitMode {
  global_pair,        ///< one (gemm, attention) pair for every profile
  per_profile_gemm,   ///< a GEMM fraction per profile, one global attention fraction
  per_profile_pair,   ///< both per profile
  /// Issue 13 item 9: at most one fitted scalar per profile (profiles with fewer than
  /// kMinRowsForOwnFit headline rows take the global value). scalar_gemm: the scalar is
  /// gemm_sustained_fraction, attention_sustained_fraction stays 1 (attention from measured
  /// kernels); scalar_both: one scalar written to both (every compute kernel's in-step share).
  scalar_gemm,
  scalar_both,
};
inline constexpr int kMinRowsForOwnFit = 10;
const char* name(FitMode m);

struct CalibrationResult {
  int rows = 0;
  HardwareFit global;                              ///< one pair for every profile
  std::map<std::string, HardwareFit> per_hardware; ///< one pair per profile (global where no rows)
  std::map<std::string, HardwareFit> per_hardware_gemm;  ///< GEMM per profile, global attention
  ErrorStats at_profiles;        ///< at the profiles' current values
  ErrorStats in_sample_global;   ///< at the global pair
  ErrorStats in_sample;          ///< at the per-profile pairs
  ErrorStats in_sample_gemm;     ///< at per_hardware_gemm
  std::vector<FamilyHoldout> holdouts;
  ErrorStats leave_one_family_out;  ///< every row predicted by per-profile fits that excluded its family
  ErrorStats leave_one_family_out_global;  ///< the same with one global pair
  ErrorStats leave_one_family_out_gemm;    ///< the same with per-profile GEMM, global attention
  /// One scalar per profile (FitMode::scalar_gemm / scalar_both), in sample and left out.
  std::map<std::string, HardwareFit> per_hardware_scalar_gemm, per_hardware_scalar_both;
  ErrorStats in_sample_scalar_gemm, in_sample_scalar_both;
  ErrorStats leave_one_family_out_scalar_gemm, leave_one_family_out_scalar_both;
  /// The one-scalar mode with the lowest leave-one-family-out MAPE: the out-of-sample choice.
  FitMode best_mode() const;
  const std::map<std::string, HardwareFit>& values(FitMode m) const;
  std::map<std::string, HardwareFit> global_values;  ///< the global pair, for every profile
};

/// Fits the two fractions by minimizing Σ log²(predicted / measured) over the headline rows
/// (simulated, not flagged) whose id starts with `id_prefix`: once for all profiles together
/// and once per profile (profiles without rows take the global pair). Each row is simulated at
/// (g, a) = (1, 1), (0.5, 1), (1, 0.5) and modelled as seconds per token = G/g + A/a + B (GEMM
/// time scales as 1/g, attention as 1/a, the rest not), so the Gauss-Newton fits (Eigen) and the
/// leave-one-family-out refits need no further simulation.
CalibrationResult calibrate(const CsvTable& table, const std::string& id_prefix = "");

std::string format_calibration_text(const CalibrationResult& r);

/// Writes the fitted values into `profiles_dir`/<profile>.yaml: each key's line and its comment
/// block (indented comment lines below it) are replaced by the value (two decimals) and a
/// comment saying when (`date`) and on what it was fitted, for the given mode (profiles without
/// rows take the global pair). Returns the files written. Throws ScenarioError if a file lacks
/// a key.
std::vector<std::string> write_calibration(const CalibrationResult& r, const std::string& profiles_dir,
                                           const std::string& date, FitMode mode);

}  // namespace clustersim::tools
