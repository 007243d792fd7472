#include "models/pipeline.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace clustersim::models {

std::vector<int> virtual_stage_layers(int layers, const ParallelSpec& p) {
  const int n = p.pp * p.vpp;
  if (static_cast<int>(p.pp_layers.size()) == n) return p.pp_layers;
  std::vector<int> out(static_cast<std::size_t>(n), layers / n);
  for (int i = 0; i < layers % n; ++i) ++out[static_cast<std::size_t>(n - 1 - i)];
  return out;
}

UnevenSplit uneven_stage_layers(int layers, int vstages, int last_extra) {
  if (last_extra > 0 && vstages > 1) {
    // Split layers + last_extra, then take the extra off the last stages (at least one layer
    // each), so the stage that also runs the MTP modules is not the step's bottleneck.
    UnevenSplit out = uneven_stage_layers(layers + last_extra, vstages);
    int left = last_extra;
    for (int i = vstages - 1; i >= 0 && left > 0 && !out.layers.empty(); --i) {
      const int take = std::min(left, out.layers[static_cast<std::size_t>(i)] - 1);
      out.layers[static_cast<std::size_t>(i)] -= take;
      left -= take;
    }
    if (!out.layers.empty() && left == 0) {
      out.megatron = false;
      out.last_lightened = true;
      return out;
    }
  }
  UnevenSplit out;
  if (vstages < 1 || layers < vstages) return out;
  const auto n = static_cast<std::size_t>(vstages);
  if ((layers + 2) % vstages == 0 && (layers + 2) / vstages >= 2 && vstages >= 2) {
    out.layers.assign(n, (layers + 2) / vstages);
    --out.layers.front();
    --out.layers.back();
    out.megatron = true;
    return out;
  }
  out.layers.assign(n, layers / vstages);
  std::vector<int> order;  // who takes an extra layer: middle stages from the centre out, then first, then last
  for (int d = 0; static_cast<int>(order.size()) < vstages - 2; ++d) {
    for (int i : {(vstages - 1) / 2 - d, vstages / 2 + d})
      if (i >= 1 && i <= vstages - 2 && std::find(order.begin(), order.end(), i) == order.end()) order.push_back(i);
  }
  order.push_back(0);
  if (vstages > 1) order.push_back(vstages - 1);
  for (int i = 0; i < layers % vstages; ++i) ++out.layers[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])];
  return out;
}

UnevenSplit v_stage_layers(int layers, int pp, int last_extra) {
  UnevenSplit out;
  if (pp < 2 || layers < 2 * (pp - 1)) return out;
  // Rank 0 runs the embedding and the loss (one layer's place each, Megatron's account_for_*) and
  // the MTP modules besides its own layers; the others need one layer per chunk. Rank 0 takes the
  // most layers that keep the busiest rank least loaded; it may hold none in a chunk, as
  // Megatron's pipeline layout lets a stage hold only the embedding or only the loss.
  const int extras = 2 + last_extra, others = pp - 1;
  int first = 0, best = 1 << 30;
  for (int n = 0; n <= layers - 2 * others; ++n) {
    const int load = std::max(n + extras, (layers - n + others - 1) / others);
    if (load <= best) best = load, first = n;
  }
  std::vector<int> rank(static_cast<std::size_t>(pp), 0);
  rank[0] = first;
  const UnevenSplit rest = uneven_stage_layers(layers - first, others);
  for (int r = 1; r < pp; ++r) rank[static_cast<std::size_t>(r)] = rest.layers[static_cast<std::size_t>(r - 1)];
  out.layers.assign(static_cast<std::size_t>(2 * pp), 0);
  for (int r = 0; r < pp; ++r) {
    const int n = rank[static_cast<std::size_t>(r)];
    out.layers[static_cast<std::size_t>(r)] = n - n / 2;
    out.layers[static_cast<std::size_t>(2 * pp - 1 - r)] = n / 2;
  }
  out.last_lightened = last_extra > 0;
  return out;
}

std::string describe_split(int layers, const ParallelSpec& p, int last_extra) {
  if (p.pp_layers.empty()) return "";
  const int n = p.pp * p.vpp;
  if (p.v_shape()) {
    const UnevenSplit v = v_stage_layers(layers, p.pp, last_extra);
    if (!automatic_split(layers, n, last_extra) || v.layers != p.pp_layers) return "as given in parallelism.pp_layers";
    return "the V's split: rank 0 (the first and the last virtual stage) also runs the embedding" +
           std::string(last_extra > 0 ? ", the loss and the MTP modules" : " and the loss") +
           "; the ranks' totals balanced with them";
  }
  const UnevenSplit rule = automatic_split(layers, n, last_extra) ? uneven_stage_layers(layers, n, last_extra) : UnevenSplit{};
  if (rule.layers.empty() || rule.layers != p.pp_layers) return "as given in parallelism.pp_layers";
  if (rule.last_lightened)
    return "the last stages carry " + std::to_string(last_extra) +
           " fewer layers for the MTP modules (a block and an LM-head pass each) they also run";
  return "pp*vpp = " + std::to_string(n) + " does not divide " + std::to_string(layers) + " layers: " +
         (rule.megatron ? "split as Megatron's account_for_embedding/loss_in_pipeline_split (first and last stages one layer fewer)"
                        : "split as evenly as possible, the extra layers on the middle stages");
}

namespace {
PipeOp F(int mb, int chunk) { return {PassKind::forward, mb, chunk}; }
PipeOp B(int mb, int chunk) { return {PassKind::backward, mb, chunk}; }
PipeOp W(int mb, int chunk = 0) { return {PassKind::weight_grad, mb, chunk}; }
PipeOp paired(PipeOp op, bool is_paired) {
  op.paired = is_paired;
  return op;
}
// The steady phase's i-th F/B pair of `steady` (PipeOp::paired): its forward runs beside the
// previous pair's backward, so the first forward and the last backward run alone.
bool steady_forward_paired(int i) { return i >= 1; }
bool steady_backward_paired(int i, int steady) { return i <= steady - 2; }

// ZB-H1 (Qi et al., arXiv 2401.10241 §2.1, Figure 3 top): 1F1B's warm-up and F/B pairs, each B
// split from its W, and stage i's W passes deferred by i micro-batches, so that every stage holds
// up to pp micro-batches whose W has not run (stage 0 holds pp, as in 1F1B) and the deferred W
// passes fill the cool-down, where 1F1B's stages wait for B. In the cool-down each B is followed
// by the oldest pending W; the rest close the step.
std::vector<PipeOp> zb_h1_schedule(int P, int stage, int m) {
  std::vector<PipeOp> ops;
  ops.reserve(static_cast<std::size_t>(3 * m));
  const int warmup = std::min(P - stage - 1, m), deferred = stage;
  int next_w = 0;
  for (int i = 0; i < warmup; ++i) ops.push_back(F(i, 0));
  for (int i = 0, steady = m - warmup; i < steady; ++i) {
    ops.push_back(paired(F(warmup + i, 0), steady_forward_paired(i)));
    ops.push_back(paired(B(i, 0), steady_backward_paired(i, steady)));
    if (i >= deferred) ops.push_back(W(next_w++));
  }
  for (int i = m - warmup; i < m; ++i) {
    ops.push_back(B(i, 0));
    ops.push_back(W(next_w++));
  }
  while (next_w < m) ops.push_back(W(next_w++));
  return ops;
}
// DualPipeV (DeepSeek's DualPipe cut in half: deepseek-ai/DualPipe dualpipev.py, the eight steps
// of DualPipeV.step): rank r of P holds virtual stages r (chunk 0) and 2P − 1 − r (chunk 1); each
// chunk takes its micro-batches in order. B passes are input gradients; "zero bubble" ones leave
// their W on a queue that later W steps drain, the others run their W at once. The F/B pairs of
// the main steps run one micro-batch's forward against another's backward (their dispatch and
// combine hide behind each other's compute: the step model detaches the MoE exchanges).
class DualPipeV {
 public:
  DualPipeV(int P, int r, int m) : P_(P), r_(r), m_(m) {}
  std::vector<PipeOp> ops() {
    const int P = P_, r = r_;
    for (int i = 0; i < (P - r - 1) * 2; ++i) f(0);                    // 1: nF0
    for (int i = 0; i < r + 1; ++i) f(0), f(1);                          // 2: nF0F1
    for (int i = 0; i < P - r - 1; ++i) b(1, true), w(), f(1);           // 3: nB1W1F1
    for (int i = 0; i < m_ - 2 * P + r + 1; ++i) pf(0), pb(1), pf(1), pb(0);  // 4: nF0B1F1B0 (p: paired)
    for (int i = 0; i < P - r - 1; ++i) b(1), pf(1), pb(0);                   // 5: nB1F1B0
    bool zb = false;                                                      // 6: nB1B0, zero bubble from the middle
    for (int i = 0, n = r + 1; i < n; ++i) {
      if (i == n / 2 && r % 2 == 1) zb = true;
      b(1, zb);
      if (i == n / 2 && r % 2 == 0) zb = true;
      b(0, zb);
    }
    for (int i = 0; i < P - r - 1; ++i) w(), b(0, true);                 // 7: nWB0
    while (next_w_ < pending_.size()) w();                                // 8: nW
    return std::move(ops_);
  }

 private:
  void f(int c, bool pair = false) { ops_.push_back(paired(F(fwd_[c]++, c), pair)); }
  void b(int c, bool zero_bubble = false, bool pair = false) {
    const int mb = bwd_[c]++;
    ops_.push_back(paired(B(mb, c), pair));
    if (zero_bubble) pending_.push_back(W(mb, c));
    else ops_.push_back(W(mb, c));
  }
  void w() { ops_.push_back(pending_[next_w_++]); }
  // A pass of a main step's overlapped chunk pair (DualPipeV._forward_backward_chunk): its B runs
  // its W at once.
  void pf(int c) { f(c, true); }
  void pb(int c) { b(c, false, true); }
  int P_, r_, m_;
  int fwd_[2] = {0, 0}, bwd_[2] = {0, 0};
  std::vector<PipeOp> ops_, pending_;
  std::size_t next_w_ = 0;
};
// ZB-V (Qi et al., arXiv 2401.10241 §6), as PyTorch's ScheduleZBVZeroBubble orders it
// (torch/distributed/pipelining/schedules.py): the V placement, 2(pp − r) − 1 chunk-0 forwards,
// r chunk-1/chunk-0 forward pairs, pp − r chunk-1 F/B/W triples, then F/B/W of each chunk in
// turn; in the cool-down B passes first and the W passes they left after them. Built for
// max(2pp − 1, m) micro-batches, the ones beyond m dropped, as PyTorch does.
std::vector<PipeOp> zbv_schedule(int P, int r, int m) {
  const int n = std::max(2 * P - 1, m);
  int f0 = 0, f1 = 0, b0 = 0, b1 = 0;
  std::vector<PipeOp> ops;
  ops.reserve(static_cast<std::size_t>(6 * m));
  auto add = [&](PipeOp op) {
    if (op.micro_batch < m) ops.push_back(op);
  };
  for (int i = 0; i < 2 * (P - r) - 1; ++i) add(F(f0++, 0));
  for (int i = 0; i < r; ++i) add(F(f1++, 1)), add(F(f0++, 0));
  for (int i = 0; i < P - r; ++i, ++b1) add(F(f1++, 1)), add(B(b1, 1)), add(W(b1, 1));
  while (f1 < f0 || f0 < n) {
    if (f0 < n) add(F(f0++, 0));
    add(B(b0, 0)), add(W(b0, 0)), ++b0;
    add(F(f1++, 1)), add(B(b1, 1)), add(W(b1, 1)), ++b1;
  }
  int w0 = b0, w1 = b1;
  for (int i = 0; i < r; ++i) add(B(b0++, 0)), add(B(b1++, 1));
  for (int i = 0; i < P - r; ++i) add(B(b0++, 0)), add(W(w0++, 0));
  while (w1 < b1) add(W(w1++, 1));
  while (w0 < b0) add(W(w0++, 0));
  return ops;
}
}  // namespace

std::vector<PipeOp> stage_schedule(const ParallelSpec& p, int stage, int micro_batches) {
  const int m = micro_batches, P = p.pp;
  std::vector<PipeOp> ops;
  ops.reserve(static_cast<std::size_t>(2 * m * p.vpp));
  if (p.schedule == PipelineSchedule::gpipe) {
    for (int i = 0; i < m; ++i) ops.push_back(F(i, 0));
    for (int i = 0; i < m; ++i) ops.push_back(B(i, 0));
    return ops;
  }
  if (p.schedule == PipelineSchedule::zb_h1) return zb_h1_schedule(P, stage, m);
  if (p.schedule == PipelineSchedule::dualpipev) return DualPipeV(P, stage, m).ops();
  if (p.schedule == PipelineSchedule::zbv) return zbv_schedule(P, stage, m);
  if (p.schedule == PipelineSchedule::one_f_one_b || p.vpp == 1) {
    const int warmup = std::min(P - stage - 1, m);
    for (int i = 0; i < warmup; ++i) ops.push_back(F(i, 0));
    for (int i = 0, steady = m - warmup; i < steady; ++i) {
      ops.push_back(paired(F(warmup + i, 0), steady_forward_paired(i)));
      ops.push_back(paired(B(i, 0), steady_backward_paired(i, steady)));
    }
    for (int i = m - warmup; i < m; ++i) ops.push_back(B(i, 0));
    return ops;
  }
  // Interleaved: the k-th chunk-pass of a stage (Megatron get_model_chunk_id and
  // get_microbatch_id_in_model_chunk).
  const int v = p.vpp, total = m * v, group = P * v;
  auto op = [&](int k, bool forward) {
    int chunk = (k % group) / P;
    if (!forward) chunk = v - 1 - chunk;
    const int mb = (k / group) * P + k % P;
    return forward ? F(mb, chunk) : B(mb, chunk);
  };
  int warmup = m == P ? total : std::min(total, (P - stage - 1) * 2 + (v - 1) * P);
  for (int k = 0; k < warmup; ++k) ops.push_back(op(k, true));
  for (int i = 0, steady = total - warmup; i < steady; ++i) {
    ops.push_back(paired(op(warmup + i, true), steady_forward_paired(i)));
    ops.push_back(paired(op(i, false), steady_backward_paired(i, steady)));
  }
  for (int k = total - warmup; k < total; ++k) ops.push_back(op(k, false));
  return ops;
}

double recompute_share(int layers, const TrainingSpec& t, const ParallelSpec& p) {
  if (t.recompute != Recompute::full || t.recompute_layers < 0 || layers <= 0) return 1.0;
  int rerun = 0;
  for (const int chunk : virtual_stage_layers(layers, p)) rerun += t.recomputed_blocks(chunk);
  return double(rerun) / layers;
}

int weight_passes_after_last_backward(int pp, int stage, int micro_batches) {
  // stage_schedule's zb-h1 order: a warm-up of min(pp - stage - 1, m) forwards; F/B pairs, a W
  // after each B from the (stage + 1)-th on; in the cool-down a W after each B; then the rest.
  const int m = micro_batches, warmup = std::min(pp - stage - 1, m), deferred = stage;
  const int steady_w = std::max(0, m - warmup - deferred), rest = m - steady_w - warmup;
  const bool w_right_after = warmup > 0 || m - 1 >= deferred;
  return (w_right_after ? 1 : 0) + rest;
}

int peak_layers_in_flight(const ParallelSpec& p, int stage, int micro_batches,
                          const std::vector<int>& vstage_layers) {
  // In the steady phase each run of pp·vpp F/B pairs forwards and backs every chunk equally, so
  // the count is periodic there and only falls in the cool-down: a 3·pp micro-batch schedule has
  // the same warm-up and at least one whole period, hence the same peak (GPipe keeps them all).
  const bool periodic = p.schedule != PipelineSchedule::gpipe && !p.v_shape() && micro_batches > 3 * p.pp;
  int now = 0, peak = 0;
  for (const PipeOp& op : stage_schedule(p, stage, periodic ? 3 * p.pp : micro_batches)) {
    const int layers = vstage_layers[static_cast<std::size_t>(p.vstage_of(stage, op.chunk))];
    if (op.kind == PassKind::forward) now += layers;
    if (op.kind == PassKind::backward) now -= layers;
    peak = std::max(peak, now);
  }
  return peak;
}

double peak_held_activations(const ParallelSpec& p, int stage, int micro_batches, const std::vector<int>& vstage_layers,
                             double saved, double kept_for_w) {
  // Periodic after the warm-up and the W deferral (at most pp micro-batches each), as above.
  const bool periodic = p.schedule != PipelineSchedule::gpipe && !p.v_shape() && micro_batches > 3 * p.pp;
  double now = 0, peak = 0;
  for (const PipeOp& op : stage_schedule(p, stage, periodic ? 3 * p.pp : micro_batches)) {
    const double layers = vstage_layers[static_cast<std::size_t>(p.vstage_of(stage, op.chunk))];
    const bool split = p.splits_backward();
    if (op.kind == PassKind::forward) now += layers * saved;
    if (op.kind == PassKind::backward) now -= layers * (split ? saved - kept_for_w : saved);
    if (op.kind == PassKind::weight_grad) now -= layers * kept_for_w;
    peak = std::max(peak, now);
  }
  return peak;
}

void check_schedule(const ParallelSpec& p, int micro_batches) {
  auto refuse = [&](const std::string& rule) {
    throw std::invalid_argument("pipeline schedule (pp " + std::to_string(p.pp) + ", vpp " + std::to_string(p.vpp) +
                                ", " + std::to_string(micro_batches) + " micro-batches): " + rule);
  };
  if (p.pp < 1 || p.vpp < 1) refuse("pp and vpp must be at least 1");
  if (micro_batches < 1) refuse("at least one micro-batch is needed");
  if (p.vpp > 1 && p.schedule == PipelineSchedule::zb_h1)
    refuse("zb-h1 runs one model chunk per stage (vpp 1); the V-shaped zero-bubble schedule is zbv");
  if (p.v_shape()) {
    if (p.pp < 2 || p.vpp != 2) refuse(std::string(name(p.schedule)) + " runs two model chunks (vpp 2) on each of pp >= 2 ranks");
    if (p.schedule == PipelineSchedule::dualpipev && micro_batches < 2 * p.pp)
      refuse("dualpipev needs at least 2·pp micro-batches (DualPipeV's rule)");
    return;
  }
  if (p.vpp > 1 && p.schedule != PipelineSchedule::interleaved) refuse("vpp > 1 needs the interleaved schedule");
  if (p.schedule == PipelineSchedule::interleaved && p.vpp > 1 && micro_batches % p.pp != 0)
    refuse("the interleaved schedule needs a micro-batch count that is a multiple of pp");
}

bool input_of(const PipeOp& op, int vstage, int vstages, PassRef* input) {
  switch (op.kind) {
    case PassKind::forward:
      if (vstage == 0) return false;
      *input = {PassKind::forward, op.micro_batch, vstage - 1};
      return true;
    case PassKind::backward:
      *input = vstage == vstages - 1 ? PassRef{PassKind::forward, op.micro_batch, vstage}
                                     : PassRef{PassKind::backward, op.micro_batch, vstage + 1};
      return true;
    case PassKind::weight_grad:
      *input = {PassKind::backward, op.micro_batch, vstage};
      return true;
  }
  return false;
}

void emit_pipeline(const ParallelSpec& p, int micro_batches, const EmitPass& emit) {
  check_schedule(p, micro_batches);
  const int vstages = p.pp * p.vpp;
  constexpr std::size_t kKinds = 3;
  auto slot = [&](PassKind kind, int mb, int vs) {
    return (static_cast<std::size_t>(mb) * static_cast<std::size_t>(vstages) + static_cast<std::size_t>(vs)) * kKinds +
           static_cast<std::size_t>(kind);
  };
  // What each emitted pass produced: emitted?, its tasks.
  std::vector<std::pair<bool, std::vector<sim::TaskId>>> outputs(static_cast<std::size_t>(micro_batches) *
                                                                 static_cast<std::size_t>(vstages) * kKinds);
  std::vector<std::vector<PipeOp>> order;
  for (int s = 0; s < p.pp; ++s) order.push_back(stage_schedule(p, s, micro_batches));
  std::vector<std::size_t> next(static_cast<std::size_t>(p.pp), 0);
  std::size_t remaining = 0;
  for (const auto& o : order) remaining += o.size();
  while (remaining > 0) {
    bool progressed = false;
    for (int s = 0; s < p.pp; ++s) {
      auto& i = next[static_cast<std::size_t>(s)];
      const auto& ops = order[static_cast<std::size_t>(s)];
      while (i < ops.size()) {
        const PipeOp op = ops[i];
        const int vs = p.vstage_of(s, op.chunk);
        std::vector<sim::TaskId> deps;
        PassRef in;
        if (input_of(op, vs, vstages, &in)) {
          auto& out = outputs[slot(in.kind, in.micro_batch, in.vstage)];
          if (!out.first) break;
          // An output has one consumer, except a B output under a split backward (the previous
          // virtual stage's B and this stage's W): that one is copied, the others handed over.
          if (in.kind == PassKind::backward && p.splits_backward()) deps = out.second;
          else deps = std::move(out.second);
        }
        outputs[slot(op.kind, op.micro_batch, vs)] = {true, emit(s, op, std::move(deps))};
        ++i, --remaining, progressed = true;
      }
    }
    if (!progressed) throw std::logic_error("pipeline schedule deadlocks");
  }
}

}  // namespace clustersim::models
