#include "reporters/report.hpp"

#include "studies/counted.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "models/pipeline.hpp"
#include "scenarios/assumptions.hpp"
#include "studies/error_band.hpp"
#include "studies/metrics.hpp"
#include "units/units.hpp"

namespace clustersim::reporters {
namespace {

// training.bf16_layers as the plan line states it: " (first 1 and last 14 blocks in BF16)".
std::string bf16_layers_text(const models::TrainingSpec& t) {
  if (!t.has_bf16_blocks()) return "";
  const auto& b = t.bf16_layers;
  if (b.first > 0 && b.last > 0) return fmt::format(" (first {} and last {} blocks in BF16)", b.first, b.last);
  return fmt::format(" ({} {} block{} in BF16)", b.first > 0 ? "first" : "last", b.first + b.last,
                     b.first + b.last == 1 ? "" : "s");
}

std::string si(double v, const char* unit) {
  const char* prefixes[] = {"", " k", " M", " G", " T", " P", " E"};
  int i = 0;
  while (std::abs(v) >= 1000.0 && i < 6) v /= 1000.0, ++i;
  return fmt::format("{:.3g}{}{}", v, prefixes[i], unit);
}

// Where a token's experts land, for the dispatchers whose bytes follow it (one copy per node or rank).
std::string token_spread_text(const scenarios::Report& r) {
  if (!models::uses_ep_kernels(r.scenario.training.moe_dispatcher)) return "";
  const models::TokenSpread x = scenarios::ep_token_spread(r.scenario);
  const auto& moe = r.scenario.model.moe;
  if (x.units <= 1) return "";
  return fmt::format("; a token's {} experts reach {:.1f} of {} {}{}, one copy each", moe.top_k, x.touched, x.units,
                     x.nodes ? "nodes" : "ranks",
                     moe.group_limited() ? fmt::format(" (routed within {} of {} expert groups)",
                                                       moe.router_group_top_k, moe.router_groups)
                                         : std::string());
}

// The defaults the run assumed (scenarios/assumptions.hpp), as text and as a JSON array.
std::string assumptions_text(const scenarios::Report& r) {
  std::string o = "\n  assumed (defaults that move the answer; set the key to change)\n";
  for (const auto& a : scenarios::assumptions(r)) o += fmt::format("    {} = {}: {}\n", a.key, a.value, a.why);
  return o;
}

studies::Json assumptions_json(const scenarios::Report& r) {
  studies::Json o = studies::Json::array();
  for (const auto& a : scenarios::assumptions(r)) o.push_back({{"key", a.key}, {"value", a.value}, {"why", a.why}});
  return o;
}

// A layer split with runs written once: [7, 8 x 14, 7].
std::string compact_split(const std::vector<int>& layers) {
  std::string o;
  for (std::size_t i = 0; i < layers.size();) {
    std::size_t j = i;
    while (j < layers.size() && layers[j] == layers[i]) ++j;
    o += fmt::format("{}{}", i ? ", " : "", layers[i]);
    if (j - i > 1) o += fmt::format(" x {}", j - i);
    i = j;
  }
  return "[" + o + "]";
}

// Issue 16: the step time's out-of-sample error band (studies/error_band.hpp) at the default confidence.
std::string error_band_text(const scenarios::Report& r) {
  const auto b = studies::error_band(r.scenario, studies::kDefaultBandConfidence);
  const double lo = 100 * (b.low - 1), hi = 100 * (b.high - 1);
  const std::string pct = std::abs(lo + hi) < 1 ? fmt::format("±{:.0f} %", 0.5 * (hi - lo))
                                                : fmt::format("{:+.0f} % / {:+.0f} %", lo, hi);
  return fmt::format("  error band       {} ({:.0f} %: {:.4f}..{:.4f} s), from {} published runs ({}), out of sample\n",
                     pct, 100 * b.confidence, b.low * r.step_time_s, b.high * r.step_time_s, b.rows, b.basis);
}

// The band's bounds at full precision (the band is a ratio; these are its products).
std::vector<std::pair<std::string, studies::Json>> error_band_members(const scenarios::Report& r) {
  const auto b = studies::error_band(r.scenario, studies::kDefaultBandConfidence);
  return {{"step_time_s_low", r.step_time_s * b.low},
          {"step_time_s_high", r.step_time_s * b.high},
          {"mfu_low", r.mfu / b.high},
          {"mfu_high", r.mfu / b.low},
          {"days_low", r.days_to_train * b.low},
          {"days_high", r.days_to_train * b.high},
          {"error_band", {{"confidence", b.confidence}, {"rows", b.rows}, {"basis", b.basis}}}};
}

// "8 nodes x 72" only when the nodes are full: a rack-scale domain may be partly used.
std::string node_count_text(int gpus, int per_node) {
  const int full = gpus / per_node, rest = gpus % per_node;
  if (rest == 0) return fmt::format("{} x {}", studies::counted(full, "node"), per_node);
  if (full == 0) return fmt::format("part of one node of {} ({} used)", per_node, studies::counted(rest, "GPU"));
  return fmt::format("{} x {} + one partial node of {}", studies::counted(full, "node"), per_node, rest);
}

}  // namespace

std::string format_text(const scenarios::Report& r) {
  const auto& sc = r.scenario;
  const auto& md = sc.model;
  const auto& p = sc.parallel;
  const auto& t = sc.training;
  std::string o;
  o += fmt::format("{}  ({})\n", sc.name, sc.source);
  o += fmt::format("  model      {}: {} parameters ({} non-embedding), {} layers, hidden {}, {} heads ({} kv), ffn {}, vocab {}\n",
                   sc.model_preset, si(r.params.total, ""), si(r.params.non_embedding, ""), md.layers, md.hidden,
                   md.heads, md.kv_heads, md.ffn_hidden, md.vocab);
  o += fmt::format("  hardware   {}: {} GPUs = {}  ({})\n", sc.hardware_preset, r.num_gpus,
                   node_count_text(r.num_gpus, sc.cluster.gpus_per_node), sc.gpu.description);
  o += fmt::format("  network    {}: {}; all-reduce algorithm {}\n", sc.network.topology.name,
                   sc.network.topology.description, topologies::kAlgorithmChoiceNames[static_cast<std::size_t>(sc.network.algorithm)]);
  if (!sc.network.differs_from_default.empty())
    o += fmt::format("  warning    the GPU and the network disagree: {}\n", sc.network.differs_from_default);
  o += fmt::format(
      "  plan       tp {} x pp {} x cp {} x dp {}, ZeRO-{}; seq {}, global batch {} ({} tokens), micro-batch {} x {} "
      "per step; {}{}, recompute {}\n",
      p.tp, p.pp, p.cp, p.dp, p.zero_stage, t.seq_len, t.global_batch, si(r.tokens_per_step, ""), t.micro_batch,
      r.step.micro_batches, hardware::name(t.precision), bf16_layers_text(t), models::name(t.recompute));
  if (p.tp > 1 || p.pp > 1)
    o += fmt::format("             sequence parallel {}, TP comm overlap {}; pipeline {}{}\n",
                     p.sequence_parallel ? "on" : "off", p.tp_comm_overlap ? "on" : "off", models::name(p.schedule),
                     p.vpp > 1 ? fmt::format(" with {} chunks per stage", p.vpp) : std::string());
  if (!p.pp_layers.empty())
    o += fmt::format("             pipeline split {} layers per {}stage; {}\n", compact_split(p.pp_layers),
                     p.vpp > 1 ? "virtual " : "", models::describe_split(md.layers, p, models::mtp_layer_equivalents(md.mtp_layers)));
  o += "\n";
  o += fmt::format("  step time        {:.4f} s\n", r.step_time_s);
  o += error_band_text(r);
  o += fmt::format("  throughput       {}tokens/s total, {:.0f} tokens/s per GPU\n", si(r.tokens_per_s, " "), r.tokens_per_s_per_gpu);
  o += fmt::format("  MFU              {:.1f} %   (HFU {:.1f} %; peak {} {})\n", 100 * r.mfu, 100 * r.hfu,
                   si(r.peak_flops, "FLOP/s"), hardware::name(t.precision));
  o += fmt::format("  model FLOP/s     {:.0f} TFLOP/s per GPU, {} per token ({})\n", r.tflops_per_gpu,
                   si(r.flops.model, "FLOP"), r.flops.formula);
  if (r.useful_token_fraction < 1)
    o += fmt::format("  padding          {:.1f} % of computed tokens are padding (data.packing {}); throughput and MFU count real tokens\n",
                     100 * (1 - r.useful_token_fraction), models::name(sc.data.packing));
  const auto& run = r.run;
  const auto& rel = sc.reliability;
  if (t.tokens > 0 && !rel.enabled)
    o += fmt::format("  days to train    {:.2f} days for {}tokens (reliability.enabled: false — no failures, checkpoints, stragglers or warm-up)\n",
                     r.days_to_train, si(t.tokens, " "));
  if (t.tokens > 0 && rel.enabled)
    o += fmt::format("  days to train    {:.2f} days expected for {}tokens (ideal {:.2f} days; goodput {:.1f} %)\n",
                     r.days_to_train, si(t.tokens, " "), r.days_to_train_ideal, 100 * run.goodput);
  if (rel.enabled) {
    if (t.tokens > 0)
      o += fmt::format("  interruptions    {:.1f} expected ({:.1f} failures, {:.1f} planned); job MTBF {:.2f} h; restart {:.0f} s each\n",
                       run.expected_interruptions, run.expected_failures, run.expected_planned, run.job_mtbf_s / 3600,
                       run.restart_s);
    else
      o += fmt::format("  reliability      goodput {:.1f} % (steady state; set training.tokens for days); job MTBF {:.2f} h; restart {:.0f} s each\n",
                       100 * run.goodput, run.job_mtbf_s / 3600, run.restart_s);
    if (run.checkpoint_interval_s > 0)
      o += fmt::format("  checkpoints      {}B every {:.0f} s ({:.0f} steps{}), {}: {:.2f} s blocking, {:.2f} s to storage\n",
                       si(models::checkpoint_bytes(r.params, t.precision), ""), run.checkpoint_interval_s,
                       run.checkpoint_interval_steps,
                       rel.checkpoint_interval_s <= 0 && rel.checkpoint_interval_steps <= 0 ? ", auto: sqrt(2 x save x MTBF)" : "",
                       models::name(rel.checkpoint_mode), run.checkpoint_save_s, run.checkpoint_write_s);
    if (t.tokens > 0) {
      const auto& l = run.lost;
      o += fmt::format("  lost time (days) padding {:.3f}, stragglers {:.3f}, warm-up {:.3f}, checkpoints {:.3f}, restarts {:.3f}, lost work {:.3f}\n",
                       l.padding_s / 86400, l.stragglers_s / 86400, l.warmup_s / 86400, l.checkpoint_s / 86400,
                       l.restart_s / 86400, l.lost_work_s / 86400);
    }
  }
  if (r.monte_carlo.runs > 0)
    o += fmt::format("  monte carlo      {} runs, seed {}: median {:.2f} days, p10 {:.2f}, p90 {:.2f}, mean {:.2f}\n",
                     r.monte_carlo.runs, r.monte_carlo.seed, r.monte_carlo.days_p50, r.monte_carlo.days_p10,
                     r.monte_carlo.days_p90, r.monte_carlo.days_mean);
  const auto& b = r.step.breakdown;
  o += "\n  where the step goes            seconds   share\n";
  auto row = [&](const char* what, double s) {
    o += fmt::format("    {:<26} {:>9.4f}  {:>5.1f} %\n", what, s, 100 * s / r.step_time_s);
  };
  row("forward compute", b.forward_s);
  row("backward compute", b.backward_s);
  if (b.recompute_s > 0) row("recompute", b.recompute_s);
  row("optimizer", b.optimizer_s);
  if (p.tp > 1) row("exposed TP communication", b.comm_exposed[models::Channel::tp]);
  if (p.cp > 1) row("exposed CP communication", b.comm_exposed[models::Channel::cp]);
  if (p.pp > 1) row("exposed PP communication", b.comm_exposed[models::Channel::pp]);
  if (r.scenario.model.is_moe()) row("exposed EP communication", b.comm_exposed[models::Channel::ep]);
  row("exposed DP communication", b.comm_exposed[models::Channel::dp]);
  if (p.pp > 1) row("pipeline bubble", b.bubble_s);
  row("idle", b.idle_s);
  if (p.pp > 1) o += fmt::format("    (pipeline stage {} of {}: the one with the most compute)\n", r.step.stage, p.pp);
  // compute_slowdown_s sums what every communication kernel's SMs (DP, TP, CP, EP) took from the
  // compute beside it, not only the DP collectives'.
  o += fmt::format(
      "    (DP collectives ran {:.4f} s in {} buckets; compute lost {:.4f} s to the SMs communication "
      "kernels held)\n",
      r.step.comm_busy[models::Channel::dp], r.step.grad_buckets, r.step.compute_slowdown_s);
  if (p.tp > 1 || p.cp > 1)
    o += fmt::format("    (TP collectives ran {:.4f} s, CP ring transfers {:.4f} s)\n", r.step.comm_busy[models::Channel::tp],
                     r.step.comm_busy[models::Channel::cp]);
  if (r.scenario.model.is_moe())
    o += fmt::format("    (MoE: EP {} x ETP {} x EDP {}, {} dispatcher; its all-to-alls ran {:.4f} s{})\n", p.ep, p.etp,
                     p.edp(), models::name(r.scenario.training.moe_dispatcher), r.step.comm_busy[models::Channel::ep],
                     token_spread_text(r));
  const auto& m = r.memory;
  o += fmt::format("\n  memory per GPU   {:.1f} GiB of {:.1f} GiB — {}{}\n", m.total_bytes / units::kBytesPerGiB, m.capacity_bytes / units::kBytesPerGiB,
                   m.fits() ? "fits" : "DOES NOT FIT",
                   p.pp > 1 ? fmt::format("  (peak stage {}, {} block-micro-batches of activations)", m.stage, m.layers_in_flight)
                            : std::string());
  o += fmt::format("    weights {:.1f}, gradients {:.1f}, optimizer {:.1f}, activations {:.1f}, logits {:.1f}, reserved {:.1f} GiB\n",
                   m.weights_bytes / units::kBytesPerGiB, m.gradients_bytes / units::kBytesPerGiB, m.optimizer_bytes / units::kBytesPerGiB,
                   m.activations_bytes / units::kBytesPerGiB, m.logits_bytes / units::kBytesPerGiB, m.reserved_bytes / units::kBytesPerGiB);
  if (r.memory_per_stage.size() > 1) {
    o += "    by pipeline stage:";
    for (const auto& st : r.memory_per_stage) o += fmt::format(" {:.1f}", st.total_bytes / units::kBytesPerGiB);
    o += " GiB\n";
  }
  o += assumptions_text(r);
  return o;
}

std::string format_json(const scenarios::Report& r, const std::vector<std::pair<std::string, studies::Json>>& extra) {
  std::vector<std::pair<std::string, studies::Json>> all = {{"assumptions", assumptions_json(r)}};
  const auto band = error_band_members(r);
  all.insert(all.end(), band.begin(), band.end());
  all.insert(all.end(), extra.begin(), extra.end());
  return studies::metrics_json(studies::report_metrics(r), all);
}

}  // namespace clustersim::reporters
