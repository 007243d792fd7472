#pragma once
// Reporters for a validation run: terminal table, JSON, and an SVG scatter plot of predicted
// vs measured tokens/s per GPU on log axes with the y = x line.
#include <string>

#include "studies/validation.hpp"

namespace clustersim::reporters {

std::string format_validation_text(const studies::ValidationSummary& s);
std::string format_validation_json(const studies::ValidationSummary& s);
std::string validation_svg(const studies::ValidationSummary& s);

}  // namespace clustersim::reporters
