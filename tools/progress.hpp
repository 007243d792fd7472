#pragma once
// A one-line progress bar with rate and ETA on stderr, drawn only when stderr is a terminal
// (so that logs of batch jobs stay clean).
#include <chrono>
#include <cstdint>
#include <string>

namespace clustersim::tools {

class ProgressBar {
 public:
  /// `enabled` false draws nothing; use stderr_is_terminal() for the default.
  ProgressBar(std::string label, bool enabled);
  void update(std::uint64_t done, std::uint64_t total);
  void finish();  ///< ends the line (when anything was drawn)

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

bool stderr_is_terminal();

}  // namespace clustersim::tools
