#pragma once
// A deliberate layering violation: the layer check must reject this tree.
#include "models/step.hpp"
