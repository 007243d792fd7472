#pragma once
// The defaults a simulation assumed that move its answer most (issue 13 item 11): keys the
// scenario left unset (attention implementation, FP8 recipe, CUDA graphs) and the stack
// overheads every run carries, each with its share of the step.
#include <string>
#include <vector>

#include "scenarios/simulate.hpp"

namespace clustersim::scenarios {

struct Assumption {
  std::string key;    ///< scenario key (training.*) or stack.* for a built-in figure
  std::string value;  ///< what was assumed
  std::string why;    ///< its source and how much of the step rides on it
};

std::vector<Assumption> assumptions(const Report& r);

}  // namespace clustersim::scenarios
