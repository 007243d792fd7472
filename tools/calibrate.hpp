#pragma once
// Least-squares fit of the global calibration constant of the hardware profiles to the
// published runs, with leave-one-source-family-out cross-validation (issue #5).
#include <string>
#include <vector>

#include "tools/csv_table.hpp"
#include "tools/validation.hpp"

namespace clustersim::tools {

struct FamilyHoldout {
  std::string family;
  double fitted_without = 0;  ///< the constant fitted on all other families
  ErrorStats held_out;        ///< error on this family's rows at that value
};

struct CalibrationResult {
  std::string parameter = "tensor_sustained_fraction";
  double value = 0;            ///< fitted on every headline row
  int rows = 0;
  ErrorStats in_sample;        ///< at `value`
  ErrorStats at_profiles;      ///< at the profiles' current values (before writing `value` back)
  std::vector<FamilyHoldout> holdouts;
  ErrorStats leave_one_family_out;  ///< every row predicted by the fit that excluded its family
};

/// Fits tensor_sustained_fraction (one value shared by every hardware profile) by minimizing
/// Σ log²(predicted / measured) over the headline rows (simulated, not flagged) whose id starts
/// with `id_prefix`. Each row is simulated at three values and modelled as seconds per token =
/// a/f + b (Eigen least squares), then one golden-section search fits f; leave-one-family-out
/// refits without each family and predicts it.
CalibrationResult calibrate(const CsvTable& table, const std::string& id_prefix = "");

std::string format_calibration_text(const CalibrationResult& r);

}  // namespace clustersim::tools
