#include "reporters/trace.hpp"

#include "models/compressed_attention_ops.hpp"
#include "models/linear_attention_ops.hpp"
#include "models/mamba_ops.hpp"
#include "models/mla_ops.hpp"
#include "models/moe_ops.hpp"
#include "models/step_program.hpp"
#include "studies/json_value.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <span>
#include <tuple>

namespace clustersim::reporters {

using namespace studies;  // the library this front end prints
namespace {

using models::TaskKind;
using models::TimelineEntry;

// Trace times in microseconds on a picosecond grid (the engine's resolution, printed with six
// decimals), so that a kernel slice never ends past its task.
double on_grid(double seconds) { return std::round(seconds * 1e12) / 1e6; }

}  // namespace

std::string collective_name(const TimelineEntry& e) {
  if (!e.collective) return models::name(e.kind);
  const topologies::Collective op = e.op;
  return fmt::format("{}.{}", topologies::name(e.group), op == topologies::Collective::send_recv ? "send" : topologies::name(op));
}

namespace {

std::string event_name(const TimelineEntry& e) {
  std::string where;
  if (e.layer >= 0) where = fmt::format(" L{}", e.layer);
  else if (e.layer == -1) where = " embedding";
  else if (e.layer == -2) where = " head";
  const std::string mb = e.micro_batch >= 0 ? fmt::format(" mb{}", e.micro_batch) : "";
  return collective_name(e) + where + mb;
}

// The kernels a block runs by part: StepCosts' dense ops, with MLA's (or DeepSeek-V4's, by the
// layer's compress ratio) projections and core in place of QKV, core and output projection, and in MoE blocks the
// shared experts in place of the dense MLP and the routed MLP's ops (models::moe_layer_ops) under the RoutedPart bits.
struct BlockKernels {
  const models::StepCosts& c;
  const models::ModelSpec& m;
  models::MoeLayerOps moe;
  models::MlaOps mla;
  models::CompressedAttentionKinds v4;
  models::MambaOps mamba, linear;
  explicit BlockKernels(const scenarios::Report& r) : c(r.costs), m(r.scenario.model) {
    const auto& sc = r.scenario;
    if (m.is_moe())
      moe = models::moe_layer_ops(m, sc.training, sc.parallel, models::expert_parallel(sc.parallel), sc.gpu,
                                  sc.training.moe_load_imbalance);
    if (m.mla.enabled()) mla = models::mla_attention_ops(m, sc.training, sc.parallel, sc.gpu);
    if (m.compressed_attention.enabled()) v4 = models::compressed_attention_kinds(m, sc.training, sc.parallel, sc.gpu);
    if (m.mamba.enabled()) mamba = models::mamba_mixer_ops(m, sc.training, sc.parallel, sc.gpu);
    if (m.linear_attention.enabled()) linear = models::linear_attention_ops(m, sc.training, sc.parallel, sc.gpu);
  }
  // The passes part `part` of `layer` ran, forward or backward.
  std::vector<const models::PassCost*> part(int layer, int part, bool fwd) const {
    const bool routed = m.is_moe() && m.moe_layer(layer);
    switch (part) {
      case models::moe_router: return fwd ? std::vector{&moe.router_fwd, &moe.permute_fwd} : std::vector{&moe.permute_bwd, &moe.router_bwd};
      case models::moe_experts: return {fwd ? &moe.experts_fwd : &moe.experts_bwd};
      case models::moe_unpermute: return {fwd ? &moe.permute_fwd : &moe.permute_bwd};
      case models::moe_rerun: return {&moe.router_fwd, &moe.permute_fwd, &moe.experts_fwd};
      default: break;
    }
    // A hybrid layer: its Mamba-2 or linear-attention mixer in place of QKV, core and output projection; no kernels
    // for a sub-block it lacks.
    const models::LayerKind kind = m.layer_kind(layer);
    const bool mixer_part = part == models::norm_attn || part == models::qkv || part == models::core ||
                            part == models::attn_out || part == models::qkv_wgrad;
    const bool mlp_part = part == models::norm_mlp || part == models::mlp || part == models::mlp_up_wgrad;
    if ((kind.mixer == models::Mixer::none && mixer_part) || (kind.mlp == models::MlpKind::none && mlp_part)) return {};
    const bool recurrent = kind.mixer == models::Mixer::mamba || kind.mixer == models::Mixer::linear;
    if (recurrent && part != models::norm_attn && mixer_part) {
      const models::MambaOps& r = kind.mixer == models::Mixer::mamba ? mamba : linear;
      if (part == models::qkv) return {fwd ? &r.in_fwd : &r.in_bwd};
      if (part == models::core) return {fwd ? &r.core_fwd : &r.core_bwd};
      if (part == models::attn_out) return {fwd ? &r.out_fwd : &r.out_bwd};
      return {};
    }
    const bool own = m.mla.enabled() || m.compressed_attention.enabled();
    if (own && (part == models::core || part == models::attn_out || part == models::qkv_wgrad)) return {};
    if (own && part == models::qkv) {
      const models::MlaOps& ops = m.mla.enabled() ? mla : v4.of(m, layer);
      return {fwd ? &ops.fwd : &ops.bwd};
    }
    if (routed && part == models::mlp_up_wgrad) return {};
    if (routed && part == models::mlp) return {fwd ? &moe.shared_fwd : &moe.shared_bwd};
    return {fwd ? &c.part_fwd[std::size_t(part)] : &c.part_bwd[std::size_t(part)]};
  }
};

// The block parts in the order the block program runs them (models/step_program.cpp,
// models/step_program_moe.cpp).
constexpr int kForwardOrder[] = {models::norm_attn, models::qkv,        models::core,        models::attn_out,
                                 models::norm_mlp,  models::mlp,        models::moe_router,  models::moe_experts,
                                 models::moe_unpermute};
constexpr int kBackwardOrder[] = {models::moe_rerun, models::moe_unpermute, models::moe_experts, models::moe_router,
                                  models::mlp,       models::mlp_up_wgrad,  models::norm_mlp,    models::attn_out,
                                  models::core,      models::qkv,           models::qkv_wgrad,   models::norm_attn};

// The kernels a compute task ran, in order: a block task's parts (ProgramItem::parts), the
// embedding's or head's pass, or a selective-recompute task. `split`: the schedule splits the
// backward, so a backward task ran its parts' B kernels and a weight_grad task their wgrads.
std::vector<const models::KernelOp*> kernels_of(const TimelineEntry& e, const BlockKernels& k, bool split) {
  std::vector<const models::KernelOp*> out;
  const bool wgrad = e.kind == TaskKind::weight_grad;
  auto add = [&](const models::PassCost& pass) {
    for (const auto& op : pass.ops)
      if (op.time_s > 0 && (!split || e.kind == TaskKind::forward || e.kind == TaskKind::recompute || op.weight_grad == wgrad))
        out.push_back(&op);
  };
  const bool fwd = e.kind == TaskKind::forward || e.kind == TaskKind::recompute;
  if (e.kind != TaskKind::forward && e.kind != TaskKind::backward && e.kind != TaskKind::recompute && !wgrad) return out;
  if (e.layer == -1) add(fwd ? k.c.embed_fwd : k.c.embed_bwd);
  if (e.layer == -2) add(fwd ? k.c.head_fwd : k.c.head_bwd);
  if (e.layer < 0) return out;
  if (e.parts == 0) {
    if (e.kind == TaskKind::recompute) add(k.c.layer_recompute);  // selective: one task before the backward
    return out;
  }
  for (int part : fwd ? std::span<const int>(kForwardOrder) : std::span<const int>(kBackwardOrder))
    if (e.parts & (1u << part))
      for (const models::PassCost* pass : k.part(e.layer, part, fwd)) add(*pass);
  return out;
}

// Memory over time on one stage: the model states (weights, gradients, optimizer, reserve) all
// step, plus one block's saved activations from the end of each block forward until the end of
// its backward. The per-block share is the memory model's peak activations over the
// block-micro-batches it counts in flight, so the counter's peak is the estimate's (without the
// loss's transient logits).
struct MemoryPoint {
  double t;
  double delta;
};
std::string memory_counter(const std::vector<TimelineEntry>& timeline, const scenarios::Report& r, int stage) {
  if (stage < 0 || std::size_t(stage) >= r.memory_per_stage.size()) return "";
  const auto& m = r.memory_per_stage[std::size_t(stage)];
  const double states = m.weights_bytes + m.gradients_bytes + m.optimizer_bytes + m.reserved_bytes;
  // Split backward (zb-h1): a block holds its saved bytes until its B pass ends, then what its
  // W pass reads until that ends.
  const bool split = m.block_saved_bytes > 0;
  const double per_block = split ? m.block_saved_bytes : m.layers_in_flight > 0 ? m.activations_bytes / m.layers_in_flight : 0;
  const double kept = split ? m.block_kept_for_w_bytes : 0;
  // A block pass of one micro-batch is several tasks; it holds activations from its forward's
  // last task to its backward's last task.
  std::map<std::pair<int, int>, double> fwd_end, bwd_end, w_end;  // by (micro-batch, layer)
  for (const auto& e : timeline) {
    if (e.stage != stage || e.layer < 0 || std::string(e.stream) != "compute") continue;
    auto& at = e.kind == TaskKind::forward ? fwd_end : e.kind == TaskKind::backward ? bwd_end : w_end;
    if (e.kind == TaskKind::forward || e.kind == TaskKind::backward || e.kind == TaskKind::weight_grad)
      at[{e.micro_batch, e.layer}] = std::max(at[{e.micro_batch, e.layer}], e.end_s);
  }
  std::vector<MemoryPoint> points{{0.0, 0.0}};
  for (const auto& [key, t] : fwd_end) points.push_back({t, per_block});
  for (const auto& [key, t] : bwd_end) points.push_back({t, -(per_block - kept)});
  for (const auto& [key, t] : w_end) points.push_back({t, -kept});
  std::stable_sort(points.begin(), points.end(), [](const MemoryPoint& a, const MemoryPoint& b) { return a.t < b.t; });
  std::string o;
  double held = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    held += points[i].delta;
    if (i + 1 < points.size() && points[i + 1].t == points[i].t) continue;  // one sample per instant
    o += fmt::format(
        ",\n{{\"ph\":\"C\",\"name\":\"memory (bytes)\",\"pid\":{},\"ts\":{:.6f},"
        "\"args\":{{\"model states\":{:.0f},\"activations\":{:.0f}}}}}",
        stage, points[i].t * 1e6, states, std::max(0.0, held));
  }
  return o;
}

}  // namespace

namespace {

// The compact kernel slices of task `e` (several per compute task), laid out in proportion to
// their modelled times (the engine runs a task at one rate at a time, so SMs lent to
// communication slow all its kernels alike).
template <class Emit>
void emit_kernels(const TimelineEntry& e, int tid, const std::vector<const models::KernelOp*>& kernels, Emit emit) {
  // Times on the printed grid (picoseconds, 6 decimals of a microsecond), so that each printed
  // kernel lies inside its printed task: rounding ts and dur apart could put a kernel's end a
  // digit past its task's.
  const double t0 = on_grid(e.start_s), t1 = on_grid(e.end_s);
  double total = 0;
  for (const auto* k : kernels) total += k->time_s;
  double done = 0;
  for (const auto* k : kernels) {
    const double a = std::clamp(on_grid(e.start_s + (e.end_s - e.start_s) * done / total), t0, t1);
    done += k->time_s;
    const double b = std::clamp(on_grid(e.start_s + (e.end_s - e.start_s) * done / total), a, t1);
    emit(fmt::format(
        "{{\"ph\":\"X\",\"name\":{},\"cat\":\"kernel\",\"pid\":{},\"tid\":{},\"ts\":{:.6f},\"dur\":{:.6f}}}",
        json_string(k->name), e.stage, tid, a, b - a));
  }
}

bool detailed(const TimelineEntry& e, const TraceOptions& options) {
  return options.micro_batches < 0 || e.micro_batch < options.micro_batches;
}

// A run of a folded micro-batch's tasks on one stream, back to back in that stream's order with
// the same micro-batch and kind: one slice from the first start to the last end.
struct FoldedSpan {
  const TimelineEntry* first;
  double end_s;
  int tasks;
};

// The folded spans of every stream, in stream order (each stream's tasks never overlap).
std::vector<FoldedSpan> folded_spans(const std::vector<TimelineEntry>& timeline, const TraceOptions& options) {
  std::map<std::pair<int, std::string>, std::vector<const TimelineEntry*>> by_stream;
  for (const auto& e : timeline) by_stream[{e.stage, std::string(e.stream)}].push_back(&e);
  std::vector<FoldedSpan> out;
  for (auto& [key, tasks] : by_stream) {
    std::stable_sort(tasks.begin(), tasks.end(), [](const auto* a, const auto* b) { return a->start_s < b->start_s; });
    FoldedSpan* open = nullptr;
    for (const TimelineEntry* e : tasks) {
      if (detailed(*e, options)) {
        open = nullptr;
        continue;
      }
      if (open && open->first->micro_batch == e->micro_batch && open->first->kind == e->kind) {
        open->end_s = std::max(open->end_s, e->end_s), ++open->tasks;
        continue;
      }
      out.push_back({e, e->end_s, 1});
      open = &out.back();
    }
  }
  return out;
}

// The trace's otherData: the title and, when kernels were folded, what was.
Json other_data(const scenarios::Report& report, const TraceOptions& options, int micro_batches) {
  Json o = {{"title", report.scenario.name}};
  if (options.micro_batches >= 0) {
    o["trace_micro_batches"] = options.micro_batches;
    o["folded"] = fmt::format(
        "micro-batches {} to {} (the steady state, which repeats the first): each stream's "
        "back-to-back tasks of one micro-batch and kind are one slice, without kernels",
        options.micro_batches, micro_batches - 1);
  }
  return o;
}

}  // namespace

TraceSize trace_size(const std::vector<TimelineEntry>& timeline, const scenarios::Report& report, const TraceOptions& options) {
  // Measured on the shipped scenarios (70b_512xh100_tp8pp4, one line per event): a task event
  // ~147 bytes, a kernel slice ~100, a memory counter sample (at most one per block pass's end) ~125.
  const BlockKernels block_kernels(report);
  const bool split = report.scenario.parallel.splits_backward();
  TraceSize size;
  std::size_t tasks = 0;
  std::set<std::tuple<int, int, int, int>> passes;  // (stage, micro-batch, layer, kind): one sample each
  for (const auto& e : timeline) {
    if (detailed(e, options)) ++tasks, size.events += kernels_of(e, block_kernels, split).size();
    if (e.layer >= 0 && e.kind != TaskKind::recompute && std::string(e.stream) == "compute")
      passes.emplace(e.stage, e.micro_batch, e.layer, int(e.kind));
  }
  const std::size_t samples = passes.size();
  const std::size_t kernels = size.events;
  if (options.micro_batches >= 0) tasks += folded_spans(timeline, options).size();
  size.events += tasks + samples;
  size.bytes = double(tasks) * 147 + double(kernels) * 100 + double(samples) * 125;
  return size;
}

void write_chrome_trace(std::ostream& out, const std::vector<TimelineEntry>& timeline, const scenarios::Report& report,
                        const TraceOptions& options) {
  // Stable thread ids: streams in the order they first appear, per stage.
  std::map<std::pair<int, std::string>, int> tids;
  std::set<int> stages;
  int micro_batches = 0;
  for (const auto& e : timeline) {
    stages.insert(e.stage);
    tids.emplace(std::make_pair(e.stage, std::string(e.stream)), 0);
    micro_batches = std::max(micro_batches, e.micro_batch + 1);
  }
  int next = 1;
  for (auto& [key, id] : tids) id = next++;
  // Streamed, one event at a time (a long step's trace runs to hundreds of MB). The events have
  // a fixed shape and are formatted as lines, their strings escaped by the JSON library: building
  // a library object per event made a 268,000-event trace 2.7x slower to write (0.45 to 1.24 s).
  out << "{\"displayTimeUnit\": \"ms\", \"otherData\": " << json_dump(other_data(report, options, micro_batches), false)
      << ",\n\"traceEvents\": [\n";
  bool first = true;
  auto emit = [&](const std::string& ev) {
    if (!first) out << ",\n";
    out << ev;
    first = false;
  };
  for (int s : stages)
    emit(json_dump(
        {{"ph", "M"}, {"name", "process_name"}, {"pid", s}, {"args", {{"name", fmt::format("pipeline stage {}", s)}}}},
        false));
  for (const auto& [key, id] : tids)
    emit(json_dump(
        {{"ph", "M"}, {"name", "thread_name"}, {"pid", key.first}, {"tid", id}, {"args", {{"name", key.second}}}},
        false));
  const BlockKernels block_kernels(report);
  const bool split = report.scenario.parallel.splits_backward();
  for (const auto& e : timeline) {
    if (!detailed(e, options)) continue;  // in a folded span below
    const int tid = tids.at({e.stage, std::string(e.stream)});
    const double t0 = on_grid(e.start_s), t1 = on_grid(e.end_s);
    emit(fmt::format(
        "{{\"ph\":\"X\",\"name\":{},\"cat\":\"{}\",\"pid\":{},\"tid\":{},\"ts\":{:.6f},\"dur\":{:.6f},"
        "\"args\":{{\"micro_batch\":{},\"layer\":{}}}}}",
        json_string(event_name(e)), models::name(e.kind), e.stage, tid, t0, t1 - t0, e.micro_batch, e.layer));
    emit_kernels(e, tid, kernels_of(e, block_kernels, split), emit);
  }
  if (options.micro_batches >= 0)
    for (const FoldedSpan& f : folded_spans(timeline, options)) {
      const TimelineEntry& e = *f.first;
      const double t0 = on_grid(e.start_s), t1 = on_grid(f.end_s);
      emit(
          fmt::format("{{\"ph\":\"X\",\"name\":\"{} mb{} (folded: {} task{})\",\"cat\":\"folded\",\"pid\":{},"
                      "\"tid\":{},\"ts\":{:.6f},\"dur\":{:.6f},\"args\":{{\"micro_batch\":{},\"tasks\":{}}}}}",
                      models::name(e.kind), e.micro_batch, f.tasks, f.tasks == 1 ? "" : "s", e.stage,
                      tids.at({e.stage, std::string(e.stream)}), t0, t1 - t0, e.micro_batch, f.tasks));
    }
  for (int s : stages) out << memory_counter(timeline, report, s);
  out << "\n]}\n";
}

std::string chrome_trace(const std::vector<TimelineEntry>& timeline, const scenarios::Report& report, const TraceOptions& options) {
  std::ostringstream out;
  write_chrome_trace(out, timeline, report, options);
  return out.str();
}

}  // namespace clustersim::reporters
