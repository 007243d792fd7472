#pragma once
// The global batch as a planning variable: a range of tokens per optimizer step (what the
// optimizer tolerates) and the batches in sequences the plan search tries within it.
#include <string>
#include <vector>

namespace clustersim::studies {

struct TokenRange {
  double lo = 0, hi = 0;  ///< tokens per step, lo <= hi
};

/// --batch-tokens "4M..16M" or "4M": k = 2^10, M = 2^20, G = 2^30 tokens, the way papers quote
/// batches (Llama 2's "4M tokens" are 1024 x 4096 sequences, Llama 3's "16M" 2048 x 8192), or a
/// plain count. Throws ScenarioError naming --batch-tokens.
TokenRange parse_batch_tokens(const std::string& text);

/// The global batches (sequences of seq_len) searched: every 2^a and 3·2^a whose tokens lie in
/// the range (the batches that dp·micro_batch of power-of-two and 3x layouts divide), ascending;
/// when none does, the largest whole batch in the range. Throws ScenarioError when the range holds
/// no whole sequence count.
std::vector<int> candidate_batches(const TokenRange& range, int seq_len);

}  // namespace clustersim::studies
