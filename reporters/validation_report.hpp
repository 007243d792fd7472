#pragma once
// Reporters for a validation run: terminal table, JSON, and an SVG scatter plot of predicted
// vs measured tokens/s per GPU on log axes with the y = x line.
#include <string>

#include "validation/validation.hpp"
#include "validation/validation_groups.hpp"

namespace clustersim::reporters {

std::string format_validation_text(const studies::ValidationSummary& s);
/// With `groups`, the object also has "groups": {"column", "values": [...]}.
std::string format_validation_json(const studies::ValidationSummary& s, const studies::ResidualGroups* groups = nullptr);
/// `validate --group-by`: the headline rows' bias and MAPE per value of one column.
std::string format_groups_text(const studies::ResidualGroups& g);
std::string validation_svg(const studies::ValidationSummary& s);

}  // namespace clustersim::reporters
