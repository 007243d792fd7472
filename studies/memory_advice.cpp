#include "studies/memory_advice.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "models/memory.hpp"
#include "units/units.hpp"

namespace clustersim::studies {
std::string memory_error(const scenarios::Report& r) { return memory_error(r.scenario, r.memory); }

std::optional<std::string> memory_prescreen(const scenarios::Scenario& sc) {
  const auto memory = models::estimate_memory(sc.model, sc.training, sc.parallel, sc.gpu);
  if (memory.fits()) return std::nullopt;
  return memory_error(sc, memory);
}

std::string memory_error(const scenarios::Scenario& sc, const models::MemoryEstimate& m) {
  const auto& p = sc.parallel;
  const auto& t = sc.training;
  // Only what this plan has not tried yet.
  std::vector<std::string> tries;
  if (p.zero_stage < 3 && p.dp * p.cp > 1) tries.push_back(fmt::format("parallelism.zero_stage: {}", p.zero_stage + 1));
  if (t.recompute == models::Recompute::none) tries.push_back("training.recompute: selective or full");
  if (t.recompute == models::Recompute::selective) tries.push_back("training.recompute: full");
  if (t.recompute == models::Recompute::full && t.recompute_layers >= 0)
    tries.push_back(fmt::format("a larger training.recompute_layers (now {})", t.recompute_layers));
  if (t.micro_batch > 1) tries.push_back("a smaller training.micro_batch");
  // Mamba-1 layers are not split over TP (scenarios/plan_rules.cpp tp_refusal).
  tries.push_back(sc.model.mamba.mamba1() ? "a larger parallelism.pp or parallelism.ep" : "a larger parallelism.tp / parallelism.pp");
  std::string hint;
  for (std::size_t i = 0; i < tries.size(); ++i) hint += (i == 0 ? "" : i + 1 == tries.size() ? " or " : ", ") + tries[i];
  const auto gib = [](double bytes) { return bytes / units::kBytesPerGiB; };
  return fmt::format(
      "{}: plan does not fit in memory: needs {:.1f} GiB per GPU of {:.1f} GiB (weights {:.1f}, "
      "gradients {:.1f}, optimizer {:.1f}, activations {:.1f}, logits {:.1f}, reserved {:.1f} GiB); try {}",
      sc.source, gib(m.total_bytes), gib(m.capacity_bytes), gib(m.weights_bytes), gib(m.gradients_bytes),
      gib(m.optimizer_bytes), gib(m.activations_bytes), gib(m.logits_bytes), gib(m.reserved_bytes), hint);
}

}  // namespace clustersim::studies
