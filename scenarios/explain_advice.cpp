#include "scenarios/explain_advice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <iterator>

#include "models/memory.hpp"
#include "models/pipeline.hpp"
#include "scenarios/plan_rules.hpp"

namespace clustersim::scenarios {
namespace {

using models::PipelineSchedule;
using models::Recompute;

// (fits in memory, MFU), compared in that order: a plan that does not fit is not a plan. Every
// candidate keeps the global batch and the GPU count, so MFU ranks step times exactly.
struct Score {
  bool fits = false;
  double mfu = 0, step_s = 0, memory_bytes = 0;
};
// An improvement must be visible in the report's one decimal of MFU points at least in part;
// ties and float noise are not advice.
constexpr double kMinGain = 5e-4;
bool better(const Score& a, const Score& b) {
  if (!a.fits) return false;  // never advice, even from a plan that does not fit either
  if (!b.fits) return true;
  return a.mfu > b.mfu + kMinGain;
}

struct Candidate {
  std::string change;
  std::function<void(Scenario&)> apply;
};

struct Knob {
  const char* name;
  std::vector<const char*> symptoms;  // waterfall causes (prefixes) this knob acts on
  std::function<std::vector<Candidate>(const Scenario&)> values;
  bool needs_large_bubble = false;    // tried only when the bubble is kLargeBubbleShare of the step
};

const char* recompute_name(Recompute r) {
  return r == Recompute::none ? "none" : r == Recompute::selective ? "selective" : "full";
}
const char* on_off(bool b) { return b ? "true" : "false"; }

// The loader's checks (scenarios/load.cpp) on the keys the knobs change; a candidate failing
// them is not a configuration the user could write.
bool valid(const Scenario& s) {
  const auto& t = s.training;
  const auto& p = s.parallel;
  if (t.micro_batch < 1 || p.dp < 1 || t.global_batch % (long(t.micro_batch) * p.dp) != 0) return false;
  const long mbs = t.global_batch / (long(t.micro_batch) * p.dp);
  if (p.schedule == PipelineSchedule::interleaved && (p.vpp < 2 || mbs % p.pp != 0)) return false;
  if (p.schedule != PipelineSchedule::interleaved && !p.v_shape() && p.vpp > 1) return false;
  if (p.v_shape() && (p.vpp != 2 || mbs < 2 * p.pp)) return false;
  if (p.schedule == PipelineSchedule::zb_h1 && p.vpp > 1) return false;  // the V-shaped one is zbv
  if (p.cp > 1 && t.seq_len % (2 * p.cp) != 0) return false;
  return mbs <= 100000 && mbs * s.model.layers <= 500000;
}

bool fits(const Scenario& s) { return models::estimate_memory(s.model, s.training, s.parallel, s.gpu).fits(); }

// vpp: every value from 1 to layers/pp; splits that pp·vpp does not divide get the loader's
// automatic uneven split. Left alone when the user gave pp_layers explicitly.
std::vector<Candidate> vpp_values(const Scenario& sc) {
  const auto& p = sc.parallel;
  const int layers = sc.model.layers;
  std::vector<Candidate> out;
  if (p.pp < 2) return out;
  const int extra = models::mtp_layer_equivalents(sc.model.mtp_layers);
  const bool automatic =
      p.pp_layers.empty() || p.pp_layers == models::uneven_stage_layers(layers, p.pp * p.vpp, extra).layers;
  if (!automatic) return out;
  for (int v = 1; v * p.pp <= layers; ++v) {
    if (v == p.vpp) continue;
    std::vector<int> split;
    if (layers % (p.pp * v) != 0 || models::automatic_split(layers, p.pp * v, extra)) {
      split = models::uneven_stage_layers(layers, p.pp * v, extra).layers;
      if (split.empty()) continue;
    }
    const PipelineSchedule sched =
        v > 1 ? PipelineSchedule::interleaved
              : (p.schedule == PipelineSchedule::interleaved ? PipelineSchedule::one_f_one_b : p.schedule);
    out.push_back({fmt::format("parallelism.vpp {} → {}{}{}", p.vpp, v, v > 1 ? " (schedule interleaved)" : " (schedule 1f1b)",
                               split.empty() ? "" : ", uneven split"),
                   [v, sched, split](Scenario& s) {
                     s.parallel.vpp = v;
                     s.parallel.schedule = sched;
                     s.parallel.pp_layers = split;
                   }});
  }
  return out;
}

// The zero-bubble schedule for a 1F1B plan with a pipeline: same stages and micro-batches, each
// backward split into B and W (models/pipeline.cpp, zb_h1_schedule). Interleaved schedules are
// the vpp knob's.
// DualPipeV too: two model chunks per rank in a V (its layer split as the loader makes it), its
// F/B pairs overlapping the MoE exchanges.
std::vector<Candidate> schedule_values(const Scenario& sc) {
  const auto& p = sc.parallel;
  if (p.pp < 2 || p.vpp != 1 || p.schedule != PipelineSchedule::one_f_one_b) return {};
  std::vector<Candidate> out{
      {"parallelism.schedule 1f1b → zb-h1", [](Scenario& s) { s.parallel.schedule = PipelineSchedule::zb_h1; }}};
  const int layers = sc.model.layers, extra = models::mtp_layer_equivalents(sc.model.mtp_layers);
  if (layers < 2 * p.pp || !p.pp_layers.empty()) return out;
  std::vector<int> split;
  if (models::automatic_split(layers, 2 * p.pp, extra)) split = models::v_stage_layers(layers, p.pp, extra).layers;
  out.push_back({"parallelism.schedule 1f1b → zbv (vpp 2)", [split](Scenario& s) {
                   s.parallel.schedule = PipelineSchedule::zbv;
                   s.parallel.vpp = 2;
                   s.parallel.pp_layers = split;
                 }});
  out.push_back({"parallelism.schedule 1f1b → dualpipev (vpp 2)", [split](Scenario& s) {
                   s.parallel.schedule = PipelineSchedule::dualpipev;
                   s.parallel.vpp = 2;
                   s.parallel.pp_layers = split;
                   if (s.model.is_moe()) s.training.moe_a2a_overlap = true;
                 }});
  return out;
}

// micro-batch: every size that divides the per-replica batch, from 1 up to the first that no
// longer fits in memory (activations grow with it).
std::vector<Candidate> micro_batch_values(const Scenario& sc) {
  std::vector<Candidate> out;
  const auto& t = sc.training;
  const int dp = sc.parallel.dp;
  if (t.global_batch % dp != 0) return out;
  const int per_replica = t.global_batch / dp;
  const bool base_fits = fits(sc);
  for (int m = 1; m <= per_replica; ++m) {
    if (per_replica % m != 0 || m == t.micro_batch) continue;
    Scenario s = sc;
    s.training.micro_batch = m;
    if (m > t.micro_batch && base_fits && !fits(s)) break;
    out.push_back({fmt::format("training.micro_batch {} → {}", t.micro_batch, m),
                   [m](Scenario& x) { x.training.micro_batch = m; }});
  }
  return out;
}

std::vector<Candidate> recompute_values(const Scenario& sc) {
  std::vector<Candidate> out;
  for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full})
    if (r != sc.training.recompute)
      out.push_back({fmt::format("training.recompute {} → {}", recompute_name(sc.training.recompute), recompute_name(r)),
                     [r](Scenario& s) { s.training.recompute = r; }});
  return out;
}

std::vector<Candidate> tp_overlap_values(const Scenario& sc) {
  if (sc.parallel.tp < 2) return {};
  const bool to = !sc.parallel.tp_comm_overlap;
  return {{fmt::format("parallelism.tp_comm_overlap {} → {}", on_off(!to), on_off(to)),
           [to](Scenario& s) { s.parallel.tp_comm_overlap = to; }}};
}

std::vector<Candidate> grad_overlap_values(const Scenario& sc) {
  if (sc.parallel.dp * sc.parallel.cp < 2) return {};
  const bool to = !sc.training.overlap_grad_reduce;
  return {{fmt::format("training.overlap_grad_reduce {} → {}", on_off(!to), on_off(to)), [to](Scenario& s) {
             s.training.overlap_grad_reduce = to;
             s.training.overlap_param_gather = to;
           }}};
}

std::vector<Candidate> zero_values(const Scenario& sc) {
  std::vector<Candidate> out;
  if (sc.parallel.dp * sc.parallel.cp < 2) return out;
  for (int z = 0; z <= 3; ++z)
    if (z != sc.parallel.zero_stage)
      out.push_back({fmt::format("parallelism.zero_stage {} → {}", sc.parallel.zero_stage, z), [z](Scenario& s) {
                       s.parallel.zero_stage = z;
                       s.parallel.fsdp_reshard_after_forward = models::FsdpReshard::automatic;
                     }});
  return out;
}

// CP at the same GPU count: cp·dp is kept, so dp follows.
std::vector<Candidate> cp_values(const Scenario& sc) {
  std::vector<Candidate> out;
  const int n = sc.parallel.cp * sc.parallel.dp;
  for (int c = 1; c <= std::min(n, 32); ++c) {
    if (n % c != 0 || c == sc.parallel.cp) continue;
    const int dp = n / c;
    out.push_back({fmt::format("parallelism.cp {} → {} (dp {} → {})", sc.parallel.cp, c, sc.parallel.dp, dp),
                   [c, dp](Scenario& s) {
                     s.parallel.cp = c;
                     s.parallel.dp = dp;
                   }});
  }
  return out;
}

// Expert parallelism at the same GPUs: every ep that divides the routed experts and, with the
// plan's etp, the stage's tp·cp·dp (the loader's rules). The change states the EP group's size
// against the NVLink domain, where dispatch and combine stay off the scale-out network.
std::vector<Candidate> ep_values(const Scenario& sc) {
  std::vector<Candidate> out;
  if (!sc.model.is_moe()) return out;
  const auto& p = sc.parallel;
  const long fold = long(p.tp) * p.cp * p.dp;
  for (int e = 1; e <= sc.model.moe.experts; ++e) {
    if (e == p.ep || !ep_refusal(e, sc.model.moe.experts).empty() || !expert_fold_refusal(e, p.etp, fold).empty()) continue;
    const long group = long(p.etp) * e;
    out.push_back({fmt::format("parallelism.ep {} → {} (EP group {} GPUs, NVLink domain {})", p.ep, e, group,
                               sc.cluster.gpus_per_node),
                   [e](Scenario& s) {
                     s.parallel.ep = e;
                     if (e < 2) s.training.moe_a2a_overlap = false;  // nothing left to overlap
                   }});
  }
  return out;
}

// Dispatch/combine overlapped with another micro-batch's compute, offered where Megatron-Core
// accepts --overlap-moe-expert-parallel-comm for the plan (plan_rules.hpp).
std::vector<Candidate> a2a_overlap_values(const Scenario& sc) {
  if (!sc.model.is_moe() || sc.training.moe_a2a_overlap) return {};
  if (!a2a_overlap_refusal(sc.model, sc.parallel, sc.training).empty()) return {};
  return {{"training.moe_a2a_overlap false → true", [](Scenario& s) { s.training.moe_a2a_overlap = true; }}};
}

std::vector<Candidate> dispatcher_values(const Scenario& sc) {
  std::vector<Candidate> out;
  if (!sc.model.is_moe() || sc.parallel.ep < 2) return out;
  for (int i = 0; i < int(std::size(models::kMoeDispatcherNames)); ++i) {
    const auto d = static_cast<models::MoeDispatcher>(i);
    if (d == sc.training.moe_dispatcher) continue;
    if (d == models::MoeDispatcher::allgather && sc.training.moe_a2a_overlap) continue;  // Megatron refuses the pair
    out.push_back(
        {fmt::format("training.moe_dispatcher {} → {}", models::name(sc.training.moe_dispatcher), models::name(d)),
         [d](Scenario& s) {
           s.training.moe_dispatcher = d;
           if (s.training.assumed.moe_dispatcher_sms)  // the new backend's own default SMs
             s.training.moe_dispatcher_sms = models::TrainingSpec::default_dispatcher_sms(d);
         }});
  }
  return out;
}

std::vector<Knob> knobs() {
  return {
      {"vpp", {"pipeline bubble"}, vpp_values},
      {"schedule", {"pipeline bubble"}, schedule_values, true},
      {"micro_batch", {"GEMM efficiency", "kernel launch", "memory-bound", "pipeline bubble"}, micro_batch_values},
      {"recompute", {"activation recompute"}, recompute_values},
      {"tp_comm_overlap", {"exposed tensor-parallel", "compute slowed by communication"}, tp_overlap_values},
      {"overlap_grad_reduce", {"exposed data-parallel"}, grad_overlap_values},
      {"zero_stage", {"exposed data-parallel", "optimizer step"}, zero_values},
      {"cp", {"exposed context-parallel", "exposed tensor-parallel", "attention kernel"}, cp_values},
      {"ep", {"exposed expert-parallel", "MoE grouped-GEMM", "MoE load imbalance"}, ep_values},
      {"moe_a2a_overlap", {"exposed expert-parallel"}, a2a_overlap_values},
      {"moe_dispatcher", {"exposed expert-parallel", "host and framework"}, dispatcher_values},
  };
}

struct Evaluator {
  const Scenario& base;
  Score before;
  // Simulated only when valid and, for a plan that fits, when the change still fits.
  bool evaluate(const std::function<void(Scenario&)>& apply, const Scenario& from, Scenario* out, Score* score) const {
    *out = from;
    apply(*out);
    if (!valid(*out)) return false;
    const bool f = fits(*out);
    if (before.fits && !f) return false;
    const Report r = simulate(*out);
    *score = {r.memory.fits(), r.mfu, r.step_time_s, r.memory.total_bytes};
    return true;
  }
};

std::string symptom_of(const Knob& k, const std::vector<WaterfallItem>& waterfall, const Report& actual) {
  if (!actual.memory.fits()) return "plan does not fit in memory";
  const WaterfallItem* worst = nullptr;
  for (const auto& w : waterfall)
    for (const char* prefix : k.symptoms)
      if (w.cause.rfind(prefix, 0) == 0 && w.seconds > 0 && (!worst || w.seconds > worst->seconds)) worst = &w;
  if (!worst) return fmt::format("searched {}", k.name);
  return fmt::format("{}: {:.1f} % of the step ({:.1f} MFU points)", worst->cause, 100 * worst->seconds / actual.step_time_s,
                     100 * worst->mfu_points);
}

Advice advice_of(std::string symptom, std::string change, const Score& before, const Score& after) {
  Advice a;
  a.symptom = std::move(symptom);
  a.change = std::move(change);
  a.mfu_before = before.mfu, a.mfu_after = after.mfu;
  a.step_before_s = before.step_s, a.step_after_s = after.step_s;
  a.fits_before = before.fits, a.fits = after.fits;
  a.memory_before_bytes = before.memory_bytes, a.memory_after_bytes = after.memory_bytes;
  return a;
}

}  // namespace

std::vector<std::string> advice_candidates(const Scenario& sc) {
  std::vector<std::string> out;
  for (const auto& k : knobs())
    for (const auto& c : k.values(sc)) out.push_back(c.change);
  return out;
}

std::vector<Advice> search_advice(const Scenario& sc, const Report& actual, const std::vector<WaterfallItem>& waterfall) {
  const Evaluator ev{sc, {actual.memory.fits(), actual.mfu, actual.step_time_s, actual.memory.total_bytes}};
  const bool large_bubble = actual.step.breakdown.bubble_s >= kLargeBubbleShare * actual.step_time_s;
  struct Best {
    const Candidate* c = nullptr;
    Score score;
    std::size_t knob = 0;
  };
  const std::vector<Knob> ks = knobs();
  std::vector<std::vector<Candidate>> values;
  std::vector<Best> bests;
  for (std::size_t i = 0; i < ks.size(); ++i)
    values.push_back(ks[i].needs_large_bubble && !large_bubble ? std::vector<Candidate>{} : ks[i].values(sc));
  for (std::size_t i = 0; i < ks.size(); ++i) {
    Best best{nullptr, ev.before, i};
    for (const auto& c : values[i]) {
      Scenario s;
      Score score;
      if (ev.evaluate(c.apply, sc, &s, &score) && better(score, best.score)) best = {&c, score, i};
    }
    if (best.c) bests.push_back(best);
  }
  // Every best fits (better() says so): rank by MFU alone, a strict weak order.
  std::stable_sort(bests.begin(), bests.end(), [](const Best& a, const Best& b) { return a.score.mfu > b.score.mfu; });
  std::vector<Advice> out;
  for (const auto& b : bests)
    out.push_back(advice_of(symptom_of(ks[b.knob], waterfall, actual), b.c->change, ev.before, b.score));
  // Combined: the knobs' best values applied greedily, best first, each kept only when the
  // plan with it beats the plan without it (knobs interact: a larger micro-batch changes the
  // bubble that vpp removes).
  if (bests.size() < 2) return out;
  Scenario combined = sc;
  Score score = ev.before;
  std::vector<std::string> applied;
  for (const auto& b : bests) {
    Scenario s;
    Score sc2;
    if (ev.evaluate(b.c->apply, combined, &s, &sc2) && better(sc2, score)) combined = s, score = sc2, applied.push_back(b.c->change);
  }
  if (applied.size() >= 2 && better(score, bests.front().score)) {
    std::string change;
    for (const auto& a : applied) change += (change.empty() ? "" : "; ") + a;
    out.insert(out.begin(), advice_of("best combination of the changes below", change, ev.before, score));
  }
  return out;
}

}  // namespace clustersim::scenarios
