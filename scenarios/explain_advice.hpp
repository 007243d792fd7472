#pragma once
// Advice that is always right: the obvious knobs searched over their ranges, every candidate
// simulated, and a change listed only when it beats the plan as given.
#include <string>
#include <vector>

#include "scenarios/explain.hpp"

namespace clustersim::scenarios {

/// Searches vpp (every value the layers allow; vpp > 1 runs the interleaved schedule), the
/// zero-bubble schedule zb-h1 (only for a 1F1B plan with pp > 1 whose pipeline bubble is at least
/// kLargeBubbleShare of the step: the bubble is all that splitting the backward can save, and it
/// exposes TP time in every B pass), micro-batch (1 up to the memory limit),
/// recompute, TP comm overlap, DP gradient-reduce overlap, ZeRO stage and CP (at the same GPU
/// count) one knob at a time, then combines the best value of each knob greedily. The metric is
/// (fits in memory, MFU): every change keeps the global batch and the GPU count, so a higher
/// MFU is exactly a shorter step. Bounded: about one simulation per valid knob value, plus one
/// per knob for the combination. `waterfall` names the symptom each knob addresses.
/// The bubble share of the step from which the schedule knob (zb-h1) is tried.
inline constexpr double kLargeBubbleShare = 0.05;

std::vector<Advice> search_advice(const Scenario& sc, const Report& actual, const std::vector<WaterfallItem>& waterfall);

/// The knob values a search tries for `sc` (for tests and the report): change text per knob.
std::vector<std::string> advice_candidates(const Scenario& sc);

}  // namespace clustersim::scenarios
