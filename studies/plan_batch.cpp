#include "studies/plan_batch.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <set>

#include "scenarios/error.hpp"

namespace clustersim::studies {
namespace {

using scenarios::ScenarioError;

// The largest batch searched (sequences): far above any published run (Llama 3 405B: 2048).
constexpr double kMaxBatchSequences = 1 << 24;

bool parse_tokens(std::string s, double* v) {
  double scale = 1;
  if (!s.empty()) {
    const char u = s.back();
    if (u == 'k' || u == 'K') scale = 1024.0;
    if (u == 'M') scale = 1024.0 * 1024;
    if (u == 'G') scale = 1024.0 * 1024 * 1024;
    if (scale != 1) s.pop_back();
  }
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(*v) || *v <= 0) return false;
  *v *= scale;
  return true;
}

}  // namespace

TokenRange parse_batch_tokens(const std::string& text) {
  const auto dots = text.find("..");
  const std::string lo = text.substr(0, dots), hi = dots == std::string::npos ? lo : text.substr(dots + 2);
  TokenRange r;
  if (!parse_tokens(lo, &r.lo) || !parse_tokens(hi, &r.hi) || r.lo > r.hi)
    throw ScenarioError(fmt::format("--batch-tokens {}: expected tokens per step as LO..HI or one value, with LO <= HI, "
                                    "e.g. 4M..16M (k = 2^10, M = 2^20, G = 2^30 tokens)", text));
  return r;
}

std::vector<int> candidate_batches(const TokenRange& range, int seq_len) {
  const double lo = std::ceil(range.lo / seq_len - 1e-9), hi = std::floor(range.hi / seq_len + 1e-9);
  if (hi < lo || hi < 1)
    throw ScenarioError(fmt::format("--batch-tokens: {:.6g}..{:.6g} tokens hold no whole number of sequences of {} "
                                    "tokens; widen the range", range.lo, range.hi, seq_len));
  if (hi > kMaxBatchSequences)
    throw ScenarioError(fmt::format("--batch-tokens: {:.6g} tokens per step is {:.6g} sequences of {}; at most {:.0f} "
                                    "are planned", range.hi, hi, seq_len, kMaxBatchSequences));
  std::set<int> out;
  for (double p = 1; p <= hi; p *= 2)
    for (double b : {p, 3 * p})
      if (b >= lo && b <= hi) out.insert(int(b));
  if (out.empty()) out.insert(int(hi));
  return {out.begin(), out.end()};
}

}  // namespace clustersim::studies
