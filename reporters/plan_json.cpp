// The JSON object of `clustersim plan --json` and the Python module's plan().
#include "reporters/plan_json.hpp"

#include <fmt/format.h>

#include "studies/json_text.hpp"
#include "studies/sweep_table.hpp"

namespace clustersim::reporters {

using namespace studies;

namespace {

std::string json_number_list(const std::vector<int>& v) {
  std::string o = "[";
  for (std::size_t i = 0; i < v.size(); ++i) o += (i ? ", " : "") + std::to_string(v[i]);
  return o + "]";
}

}  // namespace

// The columns of a plan in the tables and the JSON, besides its figures (the global batch when
// it is searched; ep and etp after dp when the header has them, an MoE model's plans).
std::vector<std::string> plan_columns(bool batch_searched, const std::vector<std::string>& header) {
  std::vector<std::string> columns = {"hardware", "cluster.gpus", "parallelism.tp", "parallelism.pp",
                                      "parallelism.cp", "dp", "parallelism.vpp", "parallelism.schedule",
                                      "training.micro_batch",
                                      "parallelism.zero_stage", "training.recompute"};
  if (column_of(header, "parallelism.ep") && column_of(header, "parallelism.etp"))
    columns.insert(columns.begin() + 6, {"parallelism.ep", "parallelism.etp"});
  if (batch_searched) columns.push_back("training.global_batch");
  return columns;
}

std::vector<std::string> equivalent_settings(const std::vector<std::string>& header, const studies::PlanCandidate& c) {
  std::vector<std::string> out;
  for (const auto& twin : c.equivalents) {
    std::string diff;
    for (const auto& col : plan_columns(true, header)) {
      const auto k = column_of(header, col);  // the batch column exists only when the batch is searched
      if (k && twin[*k] != c.cells[*k]) diff += fmt::format("{}{}={}", diff.empty() ? "" : " ", col, twin[*k]);
    }
    out.push_back(diff);
  }
  return out;
}

std::string plan_json(const studies::PlanRequest& a, const studies::PlanResult& res) {
  const auto& stats = res.stats;
  const auto& header = res.header;
  const auto& meeting = res.cheapest;
  const auto& fastest = res.fastest_per_gpu_count;
  const auto& common = res.common_rejections;
  const double tokens = res.tokens;
  const int global_batch = res.global_batch;
  auto row_json = [&](const studies::PlanCandidate& c) {
    std::string o = "{";
    for (const auto& col : plan_columns(false, header))
      o += fmt::format("{}: {}, ", json_quote(col), json_scalar(c.cells[*column_of(header, col)]));
    for (const char* k : {"mfu", "step_time_s", "days_to_train", "gpu_hours", "cost_usd", "peak_memory_bytes"})
      o += fmt::format("{}: {}, ", json_quote(k), json_scalar(c.cells[*column_of(header, k)]));
    const auto& e = c.costs;
    o += fmt::format(
        "\"global_batch\": {}, \"tokens_per_step\": {}, \"it_power_w_per_gpu\": {}, "
        "\"energy_mwh\": {}, \"gpu_cost_usd\": {}, \"energy_cost_usd\": {}, \"total_cost_usd\": {}",
        c.global_batch, long(c.global_batch) * a.seq_len, json_number(e.it_w_per_gpu), json_number(e.energy_mwh),
        json_number(e.gpu_cost_usd), json_number(e.energy_cost_usd), json_number(e.total_cost_usd));
    o += fmt::format(", \"days_to_train_high\": {}, \"error_band_basis\": {}, \"poorly_validated\": {}",
                     json_number(c.days_high), json_quote(c.band_basis), c.poorly_validated ? "true" : "false");
    std::string same;
    for (const auto& setting : equivalent_settings(header, c)) same += (same.empty() ? "" : ", ") + json_quote(setting);
    o += fmt::format(", \"equivalent_settings\": [{}]", same);
    return o + "}";
  };
  std::string hardware = "[";
  for (std::size_t i = 0; i < res.hardware.size(); ++i) hardware += (i ? ", " : "") + json_quote(res.hardware[i]);
  hardware += "]";
  std::string o = fmt::format(
      "{{\n  \"model\": {},\n  \"tokens\": {:.17g},\n  \"days\": {:.17g},\n  \"seq_len\": {},\n"
      "  \"global_batch\": {},\n  \"global_batches_searched\": {},\n  \"hardware\": {},\n"
      "  \"rank_by\": {},\n  \"confidence\": {},\n  \"band_confidence\": {},\n  \"priced\": {},\n  \"pue\": {},\n  "
      "\"price_per_kwh\": {},\n"
      "  \"plans\": {},\n  \"simulated\": {},\n  \"skipped\": {},\n  \"fits\": {},\n"
      "  \"cheapest\": [",
      json_quote(a.model), tokens, a.days, a.seq_len, global_batch, json_number_list(res.batches), hardware,
      json_quote(studies::name(a.rank)), json_number(a.confidence), json_number(studies::band_confidence(a)),
      res.priced ? "true" : "false", json_number(a.energy.pue), json_number(a.energy.price_per_kwh), stats.evaluated,
      stats.ok, stats.pruned, meeting.empty() ? "false" : "true");
  for (std::size_t i = 0; i < meeting.size(); ++i) o += (i ? ",\n    " : "\n    ") + row_json(meeting[i]);
  o += meeting.empty() ? "],\n  \"fastest_per_gpu_count\": [" : "\n  ],\n  \"fastest_per_gpu_count\": [";
  std::size_t i = 0;
  for (const auto& c : fastest) o += (i++ ? ",\n    " : "\n    ") + row_json(c);
  o += fastest.empty() ? "],\n  \"common_rejections\": [" : "\n  ],\n  \"common_rejections\": [";
  for (std::size_t j = 0; j < common.size(); ++j)
    o += fmt::format("{}{{\"count\": {}, \"reason\": {}}}", j ? ",\n    " : "\n    ", common[j].first, json_quote(common[j].second));
  o += common.empty() ? "],\n  \"not_searched\": [" : "\n  ],\n  \"not_searched\": [";
  for (std::size_t j = 0; j < res.notes.size(); ++j) o += (j ? ", " : "") + json_quote(res.notes[j]);
  o += fmt::format("],\n  \"batch_binding\": {},\n  \"widened_to_gpus\": {}\n}}\n",
                   json_quote(studies::batch_binding_note(a, res)), res.widened_to);
  return o;
}

}  // namespace clustersim::reporters
