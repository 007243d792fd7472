#pragma once
// Why the MFU is what it is: a waterfall from 100% of peak to the achieved MFU, the roofline
// class of every kernel, and advice backed by what-if re-simulations.
#include <string>
#include <vector>

#include "scenarios/simulate.hpp"

namespace clustersim::scenarios {

/// The waterfall's bubble item: the same seconds as the report's "pipeline bubble" row and the
/// JSON's breakdown.bubble_s (the busiest stage waiting for other stages' work).
inline constexpr const char* kBubbleCause = "pipeline bubble (busiest stage waiting for other stages)";

/// One loss: points of peak (0.05 = 5 points) and seconds of the step it costs.
struct WaterfallItem {
  std::string cause;
  double mfu_points = 0;
  double seconds = 0;
};

struct OpRoofline {
  std::string name;        ///< kernel name (e.g. "mlp_gate_up.wgrad")
  std::string kind;        ///< gemm | attention | memory
  std::string bound;       ///< compute | memory | latency
  double seconds_per_step = 0;
  double flop = 0;         ///< per call
  double bytes = 0;        ///< per call
  double intensity = 0;    ///< FLOP per byte
  double achieved_flops = 0;  ///< FLOP/s while it runs
  double calls_per_step = 0;  ///< per GPU, averaged over pipeline stages
};

/// A change that was simulated and beats the plan as given on (fits in memory, MFU); the global
/// batch and GPU count stay, so its MFU gain is exactly a step-time gain (explain_advice.hpp).
struct Advice {
  std::string symptom;     ///< from the waterfall, e.g. "exposed DP communication 12.3% of the step"
  std::string change;      ///< e.g. "training.micro_batch 1 → 2"
  double mfu_before = 0, mfu_after = 0;
  double step_before_s = 0, step_after_s = 0;
  bool fits_before = true;
  bool fits = true;        ///< after the change
  /// Peak memory per GPU, the memory model's (models::estimate_memory) before and after the
  /// change: e.g. zb-h1 keeps each wgrad's X and dY from B until W (models/memory_wgrad.hpp).
  double memory_before_bytes = 0, memory_after_bytes = 0;
};

struct Explanation {
  std::vector<WaterfallItem> waterfall;  ///< 1 − Σ mfu_points = achieved MFU
  std::string method;
  std::vector<OpRoofline> ops;           ///< sorted by time per step, largest first
  /// GPU kernel seconds per step by layer part, from `ops` by kernel name (part_of_kernel): the
  /// sequence mixers by kind (attention, Mamba-2, linear attention), the MoE and dense MLPs, and
  /// the rest (norms, residuals, embedding, head, loss). Communication is not in it.
  std::vector<std::pair<std::string, double>> by_part;
  double ridge_flop_per_byte = 0;        ///< peak / HBM bandwidth
  std::vector<Advice> advice;
};

/// Attributes the lost MFU by re-simulating the scenario with one cause removed at a time,
/// cumulatively (see explain.cpp for the order and why).
Explanation explain(const Scenario& sc, const Report& actual);

/// The layer part a kernel belongs to, from its name's first segment: "attention mixers",
/// "Mamba mixers", "linear-attention mixers", "MoE MLPs", "dense MLPs" or "other".
const char* part_of_kernel(const std::string& name);

}  // namespace clustersim::scenarios
