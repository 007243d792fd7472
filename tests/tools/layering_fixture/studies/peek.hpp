#pragma once
// A deliberate violation: a study reaching into the step model's internals.
#include "models/detail/step_graph.hpp"
