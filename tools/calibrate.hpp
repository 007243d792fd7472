#pragma once
// Least-squares fit of the hardware profiles' calibration constant (tensor_sustained_fraction)
// to the published runs, with leave-one-source-family-out cross-validation (issue #5).
#include <map>
#include <string>
#include <vector>

#include "tools/csv_table.hpp"
#include "tools/validation.hpp"

namespace clustersim::tools {

struct HardwareFit {
  double value = 0;  ///< fitted fraction for this profile
  int rows = 0;      ///< headline rows on this profile (0: the global value is used)
};

struct FamilyHoldout {
  std::string family;
  std::map<std::string, HardwareFit> fitted_without;  ///< per profile, fitted on the other families
  ErrorStats held_out;                                ///< this family's rows at those values
};

struct CalibrationResult {
  std::string parameter = "tensor_sustained_fraction";
  int rows = 0;
  double global_value = 0;                         ///< one value for every profile
  std::map<std::string, HardwareFit> per_hardware; ///< one value per profile (global where no rows)
  ErrorStats at_profiles;        ///< at the profiles' current values
  ErrorStats in_sample_global;   ///< at global_value
  ErrorStats in_sample;          ///< at the per-profile values
  std::vector<FamilyHoldout> holdouts;
  ErrorStats leave_one_family_out;  ///< every row predicted by per-profile fits that excluded its family
};

/// Fits tensor_sustained_fraction by minimizing Σ log²(predicted / measured) over the headline
/// rows (simulated, not flagged) whose id starts with `id_prefix`: once for all profiles together
/// and once per profile (profiles without rows take the global value). Each row is simulated at
/// three values of the fraction f and modelled as seconds per token = a/f + b (Eigen least
/// squares), so the fits and the leave-one-family-out refits need no further simulation.
CalibrationResult calibrate(const CsvTable& table, const std::string& id_prefix = "");

std::string format_calibration_text(const CalibrationResult& r);

/// Writes the fitted values into `profiles_dir`/<profile>.yaml: the tensor_sustained_fraction
/// line and its comment block (until the next top-level key) are replaced by the value (two
/// decimals) and a comment saying when (`date`) and on what it was fitted. Profiles without rows
/// get the global value. Returns the files written. Throws ScenarioError if a file lacks the key.
std::vector<std::string> write_calibration(const CalibrationResult& r, const std::string& profiles_dir,
                                           const std::string& date);

}  // namespace clustersim::tools
