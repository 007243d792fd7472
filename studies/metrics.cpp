#include "studies/metrics.hpp"

#include <fmt/format.h>

#include "models/pipeline.hpp"
#include "studies/cell_text.hpp"

namespace clustersim::studies {
namespace {

using units::Unit;

void add_step(std::vector<Metric>& m, const scenarios::Report& r) {
  const auto& sc = r.scenario;
  const auto s = [](double v) { return units::Seconds(v); };
  m.emplace_back("name", sc.name);
  m.emplace_back("model", sc.model_preset);
  m.emplace_back("hardware", sc.hardware_preset);
  m.emplace_back("topology", sc.network.topology.name);
  m.emplace_back("algorithm",
                 std::string(topologies::kAlgorithmChoiceNames[static_cast<std::size_t>(sc.network.algorithm)]));
  m.emplace_back("num_gpus", Unit::none, r.num_gpus);
  m.emplace_back("tp", Unit::none, sc.parallel.tp);
  m.emplace_back("pp", Unit::none, sc.parallel.pp);
  m.emplace_back("cp", Unit::none, sc.parallel.cp);
  m.emplace_back("dp", Unit::none, sc.parallel.dp);
  if (!sc.parallel.pp_layers.empty()) {  // an uneven split, given or chosen by the loader
    m.emplace_back("pp_layers", Json(sc.parallel.pp_layers));
    m.emplace_back("pp_split", models::describe_split(sc.model.layers, sc.parallel, models::mtp_layer_equivalents(sc.model.mtp_layers)));
  }
  m.emplace_back("micro_batches", Unit::none, r.step.micro_batches);
  m.emplace_back("step_time_s", s(r.step_time_s));
  m.emplace_back("tokens_per_step", Unit::tokens, r.tokens_per_step);
  m.emplace_back("tokens_per_s", Unit::tokens_per_s, r.tokens_per_s);
  m.emplace_back("tokens_per_s_per_gpu", Unit::tokens_per_s, r.tokens_per_s_per_gpu);
  m.emplace_back("mfu", Unit::none, r.mfu);
  m.emplace_back("hfu", Unit::none, r.hfu);
  m.emplace_back("tflops_per_gpu", Unit::none, r.tflops_per_gpu);  // 10^12 FLOP/s, as the name says
  m.emplace_back("peak_flops_per_gpu", units::FlopPerSecond(r.peak_flops));
  m.emplace_back("days_to_train", Unit::days, r.days_to_train);
  m.emplace_back("days_to_train_ideal", Unit::days, r.days_to_train_ideal);
  m.emplace_back("goodput", Unit::none, r.run.goodput);
  m.emplace_back("expected_interruptions", Unit::none, r.run.expected_interruptions);
  m.emplace_back("checkpoint_interval_s", s(r.run.checkpoint_interval_s));
  m.emplace_back("useful_token_fraction", Unit::none, r.useful_token_fraction);
  m.emplace_back("peak_memory_bytes", units::Bytes(r.memory.total_bytes));
  m.emplace_back("fits_in_memory", r.memory.fits());
  m.emplace_back("model_params", Unit::none, r.params.total);
  m.emplace_back("model_params_non_embedding", Unit::none, r.params.non_embedding);
  m.emplace_back("flops_per_token", units::Flop(r.flops.model));
  m.emplace_back("hardware_flops_per_token", units::Flop(r.flops.hardware));
  m.emplace_back("flops_formula", r.flops.formula);
  const auto& b = r.step.breakdown;
  m.emplace_back("breakdown.forward_s", s(b.forward_s));
  m.emplace_back("breakdown.backward_s", s(b.backward_s));
  m.emplace_back("breakdown.recompute_s", s(b.recompute_s));
  m.emplace_back("breakdown.optimizer_s", s(b.optimizer_s));
  m.emplace_back("breakdown.dp_comm_exposed_s", s(b.comm_exposed[models::Channel::dp]));
  m.emplace_back("breakdown.idle_s", s(b.idle_s));
  m.emplace_back("breakdown.tp_comm_exposed_s", s(b.comm_exposed[models::Channel::tp]));
  m.emplace_back("breakdown.cp_comm_exposed_s", s(b.comm_exposed[models::Channel::cp]));
  m.emplace_back("breakdown.pp_comm_exposed_s", s(b.comm_exposed[models::Channel::pp]));
  m.emplace_back("breakdown.bubble_s", s(b.bubble_s));
  if (r.scenario.model.is_moe()) m.emplace_back("breakdown.ep_comm_exposed_s", s(b.comm_exposed[models::Channel::ep]));
}

void add_memory(std::vector<Metric>& m, const scenarios::Report& r) {
  const auto& mem = r.memory;
  const auto by = [](double v) { return units::Bytes(v); };
  m.emplace_back("memory.weights_bytes", by(mem.weights_bytes));
  m.emplace_back("memory.gradients_bytes", by(mem.gradients_bytes));
  m.emplace_back("memory.optimizer_bytes", by(mem.optimizer_bytes));
  m.emplace_back("memory.activations_bytes", by(mem.activations_bytes));
  m.emplace_back("memory.logits_bytes", by(mem.logits_bytes));
  m.emplace_back("memory.reserved_bytes", by(mem.reserved_bytes));
  m.emplace_back("memory.capacity_bytes", by(mem.capacity_bytes));
  m.emplace_back("memory.stage", Unit::none, mem.stage);
  m.emplace_back("memory.layers_in_flight", Unit::none, mem.layers_in_flight);
}

void add_run(std::vector<Metric>& m, const scenarios::Report& r) {
  const auto s = [](double v) { return units::Seconds(v); };
  const auto& run = r.run;
  m.emplace_back("lost_time.padding_s", s(run.lost.padding_s));
  m.emplace_back("lost_time.stragglers_s", s(run.lost.stragglers_s));
  m.emplace_back("lost_time.warmup_s", s(run.lost.warmup_s));
  m.emplace_back("lost_time.checkpoint_s", s(run.lost.checkpoint_s));
  m.emplace_back("lost_time.restart_s", s(run.lost.restart_s));
  m.emplace_back("lost_time.lost_work_s", s(run.lost.lost_work_s));
  const auto& rel = r.scenario.reliability;
  m.emplace_back("reliability.enabled", rel.enabled);
  m.emplace_back("reliability.ideal_s", s(run.ideal_s));
  m.emplace_back("reliability.expected_s", s(run.expected_s));
  m.emplace_back("reliability.useful_s", s(run.useful_s));
  m.emplace_back("reliability.job_mtbf_s", s(run.job_mtbf_s));
  m.emplace_back("reliability.expected_failures", Unit::none, run.expected_failures);
  m.emplace_back("reliability.expected_planned_interruptions", Unit::none, run.expected_planned);
  m.emplace_back("reliability.checkpoint_mode", std::string(models::name(rel.checkpoint_mode)));
  m.emplace_back("reliability.checkpoint_bytes",
                 units::Bytes(models::checkpoint_bytes(r.params, r.scenario.training.precision,
                                                                   r.scenario.training.fp32_optimizer_state)));
  m.emplace_back("reliability.checkpoint_interval_steps", Unit::none, run.checkpoint_interval_steps);
  m.emplace_back("reliability.checkpoint_save_s", s(run.checkpoint_save_s));
  m.emplace_back("reliability.checkpoint_write_s", s(run.checkpoint_write_s));
  m.emplace_back("reliability.restart_s", s(run.restart_s));
  m.emplace_back("reliability.straggler_factor", Unit::none, run.straggler_factor);
  if (r.monte_carlo.runs > 0) {
    const auto& mc = r.monte_carlo;
    m.emplace_back("reliability.monte_carlo.runs", Unit::none, mc.runs);
    m.emplace_back("reliability.monte_carlo.seed", Json(mc.seed));
    m.emplace_back("reliability.monte_carlo.days_mean", Unit::days, mc.days_mean);
    m.emplace_back("reliability.monte_carlo.days_p10", Unit::days, mc.days_p10);
    m.emplace_back("reliability.monte_carlo.days_p50", Unit::days, mc.days_p50);
    m.emplace_back("reliability.monte_carlo.days_p90", Unit::days, mc.days_p90);
  }
}

Json stages_json(const scenarios::Report& r) {
  Json stages = Json::array();
  for (const auto& st : r.memory_per_stage)
    stages.push_back({{"stage", st.stage},
                      {"total_bytes", json_bytes_value(st.total_bytes)},
                      {"activations_bytes", json_bytes_value(st.activations_bytes)},
                      {"layers_in_flight", st.layers_in_flight}});
  return stages;
}

}  // namespace

std::string Metric::cell() const {
  if (const auto* d = std::get_if<double>(&value)) return unit == units::Unit::bytes ? bytes_cell(*d) : number_cell(*d);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  return json_dump(std::get<Json>(value), false);
}

Json Metric::json() const {
  if (const auto* d = std::get_if<double>(&value))
    return unit == units::Unit::bytes ? json_bytes_value(*d) : json_number_value(*d);
  if (const auto* b = std::get_if<bool>(&value)) return *b;
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  return std::get<Json>(value);
}

std::vector<Metric> report_metrics(const scenarios::Report& r) {
  std::vector<Metric> m;
  m.reserve(96);
  add_step(m, r);
  add_memory(m, r);
  add_run(m, r);
  m.emplace_back("memory_per_stage", stages_json(r));
  const auto s = [](double v) { return units::Seconds(v); };
  m.emplace_back("dp_comm_busy_s", s(r.step.comm_busy[models::Channel::dp]));
  m.emplace_back("compute_slowdown_s", s(r.step.compute_slowdown_s));
  m.emplace_back("tp_comm_busy_s", s(r.step.comm_busy[models::Channel::tp]));
  m.emplace_back("cp_comm_busy_s", s(r.step.comm_busy[models::Channel::cp]));
  m.emplace_back("breakdown_stage", Unit::none, r.step.stage);
  m.emplace_back("simulated_tasks", Unit::none, double(r.step.tasks));
  m.emplace_back("simulated_events", Unit::none, double(r.step.events));
  return m;
}

const std::vector<std::string>& metric_columns() {
  // The keys do not depend on the values; an empty report has every always-present one.
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> out;
    for (const Metric& m : report_metrics(scenarios::Report{})) out.push_back(m.key);
    return out;
  }();
  return columns;
}

Json metrics_object(const std::vector<Metric>& metrics, const std::vector<std::pair<std::string, Json>>& extra) {
  Json out = Json::object();
  for (const Metric& m : metrics) {
    Json* at = &out;  // the object the dotted key's last segment belongs to
    std::size_t from = 0;
    for (std::size_t dot; (dot = m.key.find('.', from)) != std::string::npos; from = dot + 1)
      at = &(*at)[m.key.substr(from, dot - from)];
    (*at)[m.key.substr(from)] = m.json();
  }
  for (const auto& [k, v] : extra) out[k] = v;
  return out;
}

std::string metrics_json(const std::vector<Metric>& metrics, const std::vector<std::pair<std::string, Json>>& extra) {
  return json_dump(metrics_object(metrics, extra)) + "\n";
}

std::string metrics_json_compact(const std::vector<Metric>& metrics) {
  return json_dump(metrics_object(metrics), false);
}

std::vector<std::string> metric_cells(const std::vector<Metric>& metrics) {
  const auto& columns = metric_columns();
  std::vector<std::string> cells(columns.size());
  std::size_t at = 0;  // both lists are in output order; the metrics may hold extra (optional) keys
  for (std::size_t c = 0; c < columns.size(); ++c) {
    while (at < metrics.size() && metrics[at].key != columns[c]) ++at;
    if (at == metrics.size()) break;
    cells[c] = metrics[at++].cell();
  }
  return cells;
}

}  // namespace clustersim::studies
