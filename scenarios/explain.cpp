#include "scenarios/explain.hpp"

#include "scenarios/explain_advice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "models/layer_passes.hpp"

namespace clustersim::scenarios {
namespace {

// Removing a cause = changing the scenario so that the cause costs nothing, then simulating
// again. Causes are removed cumulatively, so the MFU gains telescope and the waterfall adds up
// exactly; the order runs from what surrounds the kernels (communication, optimizer,
// recompute) inward to the kernels themselves, so each kernel-level loss is measured on the
// step that is left once the overheads around it are gone. An attribution by re-simulation is
// used rather than blaming idle intervals on the critical path because overlapped effects (a
// collective slowing a GEMM by holding SMs) leave no idle interval to blame.
constexpr double kHuge = 1e18;

struct Cause {
  const char* name;
  std::function<void(Scenario&)> remove;
  bool subtract_optimizer = false;  // optimizer time taken off analytically (see below)
  const char* grounds = "";          // the data behind the loss ("": named by its kernels, below)
  bool moe_only = false;             // listed for MoE models only
};

std::vector<Cause> causes() {
  return {
      {"compute slowed by communication kernels (SMs held by NCCL)",
       [](Scenario& s) { s.gpu.comm_sms = 0; }, false, "hardware.md §3.9 (NCCL SM use)"},
      {"exposed tensor-parallel communication", [](Scenario& s) { s.training.free_comm.tp = true; }},
      {"exposed context-parallel (ring attention) communication", [](Scenario& s) { s.training.free_comm.cp = true; }},
      {"exposed pipeline send/receive", [](Scenario& s) { s.training.free_comm.pp = true; }},
      {"exposed data-parallel communication", [](Scenario& s) { s.training.free_comm.dp = true; }},
      {"exposed expert-parallel communication (MoE dispatch/combine)", [](Scenario& s) { s.training.free_comm.ep = true; },
       false, "", true},
      {"MoE load imbalance (busiest expert rank)", [](Scenario& s) { s.training.moe_load_imbalance = 1.0; }, false,
       "models/moe_ops.hpp auto_load_imbalance or training.moe_load_imbalance", true},
      // Host work first: the per-step fixed work runs inside the optimizer task.
      {"host and framework overhead (launch waits, grad-norm, syncs, batch upload)",
       [](Scenario& s) { s.training.ideal.host = true; }, false, "host_op_cost.csv (CPU time per op, by host), layer_ops_host.cpp"},
      // The optimizer is one memory-bound kernel at the end of the step, outside any overlap,
      // so its time is taken off the step directly rather than through a scenario knob.
      {"optimizer step", [](Scenario&) {}, true},
      {"activation recompute", [](Scenario& s) { s.training.recompute = models::Recompute::none; }},
      {"low-precision quantization kernels (recipe casts)", [](Scenario& s) { s.training.ideal.quantize = true; },
       false, "layer_ops_recipe.cpp traffic at the memory model's bandwidth; fp8_speedups.csv overheads"},
      {"memory-bound element-wise ops (norms, activations, residuals, loss)",
       [](Scenario& s) { s.training.ideal.memory = true; }},
      {"kernel launch gaps", [](Scenario& s) { s.gpu.kernel_gap = units::Seconds(0); }, false, "hardware.md §3.10 (gpu-benches)"},
      {"sustained clock below the benchmarks' (power cap)", [](Scenario& s) { s.gpu.sustained_clock_ratio = 1.0; },
       false, "hardware profile power and clock fields"},
      {"kernels slower inside a step than benchmarked alone (sustained clocks, shared SMs, stream gaps)",
       [](Scenario& s) { s.gpu.in_step_rate_ratio = 1.0; }, false,
       "kernel_attention.csv in-step vs isolated FlashAttention rows (hardware profile in_step_rate_ratio)"},
      // The profile's one fitted scalar (validation/calibrate.cpp), removed before the measured
      // kernel losses so that they are measured at the benchmarks' own rates.
      {"in-step share of benchmarked kernel rates (FITTED scalar, not a measurement)",
       [](Scenario& s) { s.gpu.compute_sustained_fraction = 1.0; }, false,
       "hardware/fitted.yaml compute_sustained_fraction of the GPU die, fitted to published.csv"},
      {"attention kernel efficiency", [](Scenario& s) { s.training.ideal.attention = true; }},
      {"MoE grouped-GEMM inefficiency (few tokens per expert)", [](Scenario& s) { s.training.ideal.grouped_gemm = true; },
       false, "", true},
      {"GEMM efficiency (ceiling, shape, wave quantization)", [](Scenario& s) { s.training.ideal.gemm = true; }},
  };
}

// The data behind the kernels of one kind: the `grounded_by` of the ops of that kind that take
// the most time per step (KernelCost::grounded_by, from the kernel models).
std::string grounding_of(const Report& r, models::OpKind kind) {
  std::map<std::string, double> seconds;
  for (const auto* pass : {&r.costs.layer_fwd, &r.costs.layer_bwd})
    for (const auto& op : pass->ops)
      if (op.kind == kind && op.grounded_by && *op.grounded_by) seconds[op.grounded_by] += op.time_s;
  std::string best;
  double most = -1;
  for (const auto& [g, t] : seconds)
    if (t > most) best = g, most = t;
  return best;
}

std::string with_grounds(const Cause& c, const Report& r) {
  const std::string name = c.name;
  std::string g = c.grounds;
  if (g.empty()) {
    if (name.rfind("attention", 0) == 0) g = grounding_of(r, models::OpKind::attention);
    if (name.rfind("GEMM", 0) == 0) g = grounding_of(r, models::OpKind::gemm);
    if (name.rfind("memory-bound", 0) == 0) g = grounding_of(r, models::OpKind::memory);
  }
  return g.empty() ? name : name + " [" + g + "]";
}

const char* kind_name(models::OpKind k) {
  return k == models::OpKind::gemm ? "gemm" : k == models::OpKind::attention ? "attention" : "memory";
}
const char* bound_name(hardware::Bound b) {
  return b == hardware::Bound::compute ? "compute" : b == hardware::Bound::memory ? "memory" : "latency";
}

double stage_imbalance_s(const models::StepResult& step) {
  if (step.stages.size() < 2) return 0;
  auto compute = [](const models::StepBreakdown& b) { return b.forward_s + b.backward_s + b.recompute_s; };
  double sum = 0, most = 0;
  for (const auto& b : step.stages) sum += compute(b), most = std::max(most, compute(b));
  return most - sum / double(step.stages.size());
}

}  // namespace

const char* part_of_kernel(const std::string& name) {
  const std::string head = name.substr(0, name.find('.'));
  // clang-format off
  static const std::pair<const char*, const char*> kParts[] = {
      {"qkv", "attention mixers"},     {"attention", "attention mixers"}, {"attn_out", "attention mixers"},
      {"rotary", "attention mixers"},  {"mla", "attention mixers"},       {"dsa", "attention mixers"},
      {"v4", "attention mixers"},      {"mhc", "hyper-connections"},
      {"mamba", "Mamba mixers"},     {"ssd", "Mamba mixers"},         {"gdn", "linear-attention mixers"},
      {"kda", "linear-attention mixers"}, {"experts", "MoE MLPs"},        {"shared_experts", "MoE MLPs"},
      {"router", "MoE MLPs"},          {"moe", "MoE MLPs"},               {"mlp_gate_up", "dense MLPs"},
      {"mlp_down", "dense MLPs"},      {"mlp_up", "dense MLPs"},          {"swiglu", "dense MLPs"},
      {"geglu", "dense MLPs"},         {"gelu", "dense MLPs"},            {"relu2", "dense MLPs"},
  };
  // clang-format on
  for (const auto& [prefix, part] : kParts)
    if (head == prefix) return part;
  return "other";
}

namespace {

std::vector<OpRoofline> roofline(const Report& r) {
  // Calls per GPU per step, averaged over the pipeline stages.
  const double mbs = r.step.micro_batches;
  const double per_stage_mbs = mbs / r.scenario.parallel.pp;
  std::map<std::string, OpRoofline> by_name;
  auto add = [&](const models::PassCost& pass, double calls) {
    for (const auto& op : pass.ops) {
      if (op.time_s <= 0) continue;
      auto& e = by_name[op.name];  // a negative count takes a dense op out of the blocks that do not run it
      e.name = op.name;
      e.kind = kind_name(op.kind);
      e.bound = bound_name(op.bound);
      e.flop = op.flop;
      e.bytes = op.bytes;
      e.intensity = op.bytes > 0 ? op.flop / op.bytes : 0;
      e.achieved_flops = op.flop / op.time_s;
      e.calls_per_step += calls;
      e.seconds_per_step += op.time_s * calls;
    }
  };
  // Each block as it runs (dense, MoE, MLA: models::layer_passes), per stage on average.
  const auto& sc = r.scenario;
  for (bool backward : {false, true})
    for (const auto& lp : models::layer_passes(sc.model, sc.training, sc.parallel, sc.gpu, r.costs, backward))
      add(lp.pass, lp.layers / sc.parallel.pp * mbs);
  for (const auto& lp : models::recompute_passes(sc.model, sc.training, sc.parallel, sc.gpu, r.costs))
    add(lp.pass, lp.layers / sc.parallel.pp * mbs * r.costs.recompute_share);
  add(r.costs.embed_fwd, per_stage_mbs);
  add(r.costs.embed_bwd, per_stage_mbs);
  add(r.costs.head_fwd, per_stage_mbs);
  add(r.costs.head_bwd, per_stage_mbs);
  std::vector<OpRoofline> out;
  for (auto& [k, v] : by_name)
    if (v.calls_per_step > 1e-9 && v.seconds_per_step > 1e-12) out.push_back(v);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.seconds_per_step > b.seconds_per_step; });
  return out;
}

}  // namespace

Explanation explain(const Scenario& sc, const Report& actual) {
  Explanation ex;
  ex.method =
      "cumulative re-simulation: the pipeline bubble (breakdown.bubble_s) is taken off, then each "
      "cause is removed in turn (NCCL SMs returned, TP/CP/PP/DP "
      "collectives made free, host overhead off, optimizer taken off, recompute off, recipe casts "
      "and memory-bound kernels free, launch gaps zero, attention and GEMMs at peak) "
      "and the MFU gain of each removal is its share of the loss";
  const double flops = actual.flops.model * actual.tokens_per_step;
  const double peak_total = actual.peak_flops * actual.num_gpus;
  auto mfu_of = [&](double step_s) { return flops / (step_s * peak_total); };

  // One definition of the pipeline bubble everywhere (report, JSON breakdown.bubble_s, this
  // waterfall, the advice's symptoms): the time the busiest stage's compute stream waits for
  // other stages' work (models::StepBreakdown::bubble_s). It is taken off first, as it is in the
  // run; every later re-simulation's own bubble is taken off the same way, so what remains of
  // each cause is measured on a step without waiting for other stages.
  const double bubble = actual.step.breakdown.bubble_s;
  ex.waterfall.push_back({std::string(kBubbleCause), mfu_of(actual.step_time_s - bubble) - mfu_of(actual.step_time_s), bubble});
  Scenario cur = sc;
  double prev_step = actual.step_time_s - bubble;
  bool optimizer_removed = false;
  Report last;
  for (const auto& cause : causes()) {
    if (cause.moe_only && !sc.model.is_moe()) continue;
    cause.remove(cur);
    last = simulate(cur);
    double step = last.step_time_s - last.step.breakdown.bubble_s;
    if (cause.subtract_optimizer) optimizer_removed = true;
    if (optimizer_removed) step -= last.step.breakdown.optimizer_s;
    ex.waterfall.push_back({with_grounds(cause, actual), mfu_of(step) - mfu_of(prev_step), prev_step - step});
    prev_step = step;
  }
  // What is left: idle time that is not the bubble (dependencies) and the FLOP-count
  // convention — the formula counts the full s² attention square and 2× forward for its
  // backward, while a causal flash kernel skips masked blocks and recomputes QKᵀ in backward.
  const double idle = last.step.breakdown.idle_s;
  ex.waterfall.push_back({"other idle time (waiting on dependencies)", mfu_of(prev_step - idle) - mfu_of(prev_step), idle});
  prev_step -= idle;
  // Stages with unequal work (layers, embedding, LM head, MTP modules): the step runs at the
  // busiest stage's compute while the others finish early; balanced, it would run at the mean.
  const double imbalance = stage_imbalance_s(last.step);
  ex.waterfall.push_back({"pipeline stage imbalance (busiest stage's compute over the mean stage's)",
                          mfu_of(prev_step - imbalance) - mfu_of(prev_step), imbalance});
  prev_step -= imbalance;
  ex.waterfall.push_back({"FLOP-count convention (causal skips, flash bwd recompute, FP8 attention)",
                          1.0 - mfu_of(prev_step), prev_step - flops / peak_total});

  ex.ops = roofline(actual);
  for (const char* part : {"attention mixers", "Mamba mixers", "linear-attention mixers", "MoE MLPs", "dense MLPs",
                           "hyper-connections", "other"}) {
    double s = 0;
    for (const auto& op : ex.ops) s += std::string(part_of_kernel(op.name)) == part ? op.seconds_per_step : 0.0;
    if (s > 0) ex.by_part.emplace_back(part, s);
  }
  ex.ridge_flop_per_byte = actual.peak_flops / sc.gpu.hbm_bandwidth.si();

  ex.advice = search_advice(sc, actual, ex.waterfall);
  return ex;
}

}  // namespace clustersim::scenarios
