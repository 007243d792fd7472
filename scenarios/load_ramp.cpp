#include "scenarios/load_ramp.hpp"

#include <fmt/format.h>

namespace clustersim::scenarios {

void read_batch_ramp(const YamlReader& tr, const models::ParallelSpec& p, models::TrainingSpec* t) {
  const YamlReader r = tr.child("batch_ramp");
  r.allow_only({"from", "to", "tokens"});
  for (const char* k : {"from", "tokens"})
    if (!r.has(k)) r.fail(k, "is required in training.batch_ramp {from, to, tokens}");
  const long to = r.integer("to", t->global_batch, 1, 100000000);
  if (to != t->global_batch)
    r.fail("to", fmt::format("({}) must equal training.global_batch ({}), the batch after the ramp", to, t->global_batch));
  const bool interleaved = p.schedule == models::PipelineSchedule::interleaved;
  const long unit = long(t->micro_batch) * p.dp * (interleaved ? p.pp : 1);
  const long from = r.integer("from", 0, 1, 100000000);
  if (from >= t->global_batch)
    r.fail("from", fmt::format("({}) must be below training.global_batch ({}): the ramp grows the batch", from, t->global_batch));
  if (from % unit != 0)
    r.fail("from", fmt::format("({}) must be a multiple of micro_batch × dp{} ({})", from, interleaved ? " × pp" : "", unit));
  const double tokens = r.number("tokens", 0, 1, 1e17);
  if (t->tokens > 0 && tokens > t->tokens)
    r.fail("tokens", fmt::format("({:g}) is more than training.tokens ({:g})", tokens, t->tokens));
  t->batch_ramp = {from, tokens};
}

}  // namespace clustersim::scenarios
