#pragma once
// "1 node", "2 nodes": a count with its noun in the number it takes, for every text writer.
#include <fmt/format.h>

#include <string>

namespace clustersim::studies {

/// `n` and `noun`, plural unless n is 1 (`plural`: the irregular form; default noun + "s").
inline std::string counted(long long n, const std::string& noun, const std::string& plural = "") {
  return fmt::format("{} {}", n, n == 1 ? noun : plural.empty() ? noun + "s" : plural);
}

}  // namespace clustersim::studies
