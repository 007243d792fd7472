// The JSON object of `clustersim plan --json` and the Python module's plan().
#include "reporters/plan_json.hpp"

#include <fmt/format.h>

#include "studies/json_value.hpp"
#include "studies/sweep_table.hpp"

namespace clustersim::reporters {

using namespace studies;

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

namespace {

Json plan_row_json(const studies::PlanRequest& a, const std::vector<std::string>& header,
                   const studies::PlanCandidate& c) {
  Json o = Json::object();
  for (const auto& col : plan_columns(false, header)) o[col] = json_cell_value(c.cells[*column_of(header, col)]);
  for (const char* k : {"mfu", "step_time_s", "days_to_train", "gpu_hours", "cost_usd", "peak_memory_bytes"})
    o[k] = json_cell_value(c.cells[*column_of(header, k)]);
  const auto& e = c.costs;
  o["global_batch"] = c.global_batch;
  o["tokens_per_step"] = std::int64_t(c.global_batch) * a.seq_len;
  o["it_power_w_per_gpu"] = json_number_value(e.it_w_per_gpu);
  o["energy_mwh"] = json_number_value(e.energy_mwh);
  o["gpu_cost_usd"] = json_number_value(e.gpu_cost_usd);
  o["energy_cost_usd"] = json_number_value(e.energy_cost_usd);
  o["total_cost_usd"] = json_number_value(e.total_cost_usd);
  o["days_to_train_high"] = json_number_value(c.days_high);
  o["error_band_basis"] = c.band_basis;
  o["poorly_validated"] = c.poorly_validated;
  o["equivalent_settings"] = equivalent_settings(header, c);
  return o;
}

}  // namespace

std::string plan_json(const studies::PlanRequest& a, const studies::PlanResult& res) {
  const auto& stats = res.stats;
  Json cheapest = Json::array(), fastest = Json::array(), common = Json::array();
  for (const auto& c : res.cheapest) cheapest.push_back(plan_row_json(a, res.header, c));
  for (const auto& c : res.fastest_per_gpu_count) fastest.push_back(plan_row_json(a, res.header, c));
  for (const auto& [count, reason] : res.common_rejections) common.push_back({{"count", count}, {"reason", reason}});
  const Json o = {{"model", a.model},
                  {"tokens", json_number_value(res.tokens)},
                  {"days", json_number_value(a.days)},
                  {"seq_len", a.seq_len},
                  {"global_batch", res.global_batch},
                  {"global_batches_searched", res.batches},
                  {"hardware", res.hardware},
                  {"rank_by", studies::name(a.rank)},
                  {"confidence", json_number_value(a.confidence)},
                  {"band_confidence", json_number_value(studies::band_confidence(a))},
                  {"priced", res.priced},
                  {"pue", json_number_value(a.energy.pue)},
                  {"price_per_kwh", json_number_value(a.energy.price_per_kwh)},
                  {"plans", stats.evaluated},
                  {"simulated", stats.ok},
                  {"skipped", stats.pruned},
                  {"fits", !res.cheapest.empty()},
                  {"cheapest", cheapest},
                  {"fastest_per_gpu_count", fastest},
                  {"common_rejections", common},
                  {"not_searched", res.notes},
                  {"batch_binding", studies::batch_binding_note(a, res)},
                  {"widened_to_gpus", res.widened_to}};
  return json_dump(o) + "\n";
}

}  // namespace clustersim::reporters
