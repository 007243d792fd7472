#pragma once
// Looking up the kernels of a pass by name, for tests of the kernel programs.
#include <string>

#include "models/layer_ops.hpp"

namespace clustersim::testing {

/// The first op of `pass` named `name`, or nullptr.
inline const models::KernelOp* op_named(const models::PassCost& pass, const std::string& name) {
  for (const models::KernelOp& op : pass.ops)
    if (op.name == name) return &op;
  return nullptr;
}

/// HBM bytes of the ops of `pass` named `name` (0 when there are none).
inline double bytes_named(const models::PassCost& pass, const std::string& name) {
  double b = 0;
  for (const models::KernelOp& op : pass.ops)
    if (op.name == name) b += op.bytes;
  return b;
}

}  // namespace clustersim::testing
