#pragma once
#include "hardware/upward.hpp"  // downward: allowed
