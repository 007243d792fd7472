#pragma once
// A user's own cluster (issue 17 §3): the fitted profile constants (validation/calibrate.hpp
// fitted_parameters()) refitted to the user's measured runs on one base profile, written as a NEW
// profile file (`base: h100-sxm` plus the fitted keys) that a scenario names by path. Installed and
// source-tree profiles are never touched.
#include <optional>
#include <string>
#include <vector>

#include "studies/csv_table.hpp"
#include "validation/validation.hpp"

namespace clustersim::studies {

struct OwnFit {
  std::string base;                         ///< the hardware profile the runs were measured on
  std::vector<std::string> used;            ///< ids of the rows fitted on
  std::vector<std::string> skipped;         ///< "id: why" for rows that could not be used
  std::vector<std::optional<double>> values;  ///< per fitted_parameters(); empty: refused
  std::vector<double> base_values;          ///< the base profile's values
  std::vector<std::string> refused;         ///< per parameter: why it was not fitted ("" when fitted)
  ErrorStats at_base;                       ///< the used rows at the base profile's values
  ErrorStats fitted;                        ///< ... at the fitted values (in sample)
  std::optional<ErrorStats> leave_one_family_out;  ///< when the rows come from more than one id family
  bool any_fitted() const;
};

/// Fits every parameter on the rows of `runs` (published.csv columns) whose gpu_type maps to `base`.
/// A parameter needs kMinRowsForOwnFit rows, and a fit that runs to the parameter's bound is refused
/// (the runs disagree with the model by more than the parameter can explain). Throws ScenarioError
/// for an unknown base.
OwnFit calibrate_own(const CsvTable& runs, const std::string& base);

/// The profile file: `name`, `description`, `base:` and the fitted keys, with the rows, the date and
/// the errors in comments.
std::string own_profile_yaml(const OwnFit& fit, const std::string& name, const std::string& runs_path,
                             const std::string& date);

std::string format_own_fit_text(const OwnFit& fit);

}  // namespace clustersim::studies
