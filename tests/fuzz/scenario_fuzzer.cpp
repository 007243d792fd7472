// libFuzzer target: scenario text → loader + validator → (bounded) simulation.
// Anything but a ScenarioError escaping, a crash, or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto sc = clustersim::scenarios::load_scenario_string(text, "<fuzz>");
    // Keep each input cheap: the fuzzer looks for crashes, not for big simulations.
    const long blocks = long(sc.training.micro_batches(sc.parallel)) * sc.model.layers;
    if (blocks > 20000 || sc.model.hidden > 65536) return 0;
    const auto report = clustersim::scenarios::simulate(sc);
    if (!(report.step_time_s > 0) || !(report.mfu > 0)) __builtin_trap();  // a nonsense number
  } catch (const clustersim::scenarios::ScenarioError&) {
  }
  return 0;
}
