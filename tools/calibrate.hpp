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

struct CalibrationResult {
  int rows = 0;
  HardwareFit global;                              ///< one pair for every profile
  std::map<std::string, HardwareFit> per_hardware; ///< one pair per profile (global where no rows)
  ErrorStats at_profiles;        ///< at the profiles' current values
  ErrorStats in_sample_global;   ///< at the global pair
  ErrorStats in_sample;          ///< at the per-profile pairs
  std::vector<FamilyHoldout> holdouts;
  ErrorStats leave_one_family_out;  ///< every row predicted by per-profile fits that excluded its family
  ErrorStats leave_one_family_out_global;  ///< the same with one global pair
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
/// comment saying when (`date`) and on what it was fitted: the global pair everywhere, or with
/// `per_profile` each profile's own pair (the global one where it has no rows). Returns the
/// files written. Throws ScenarioError if a file lacks a key.
std::vector<std::string> write_calibration(const CalibrationResult& r, const std::string& profiles_dir,
                                           const std::string& date, bool per_profile);

}  // namespace clustersim::tools
