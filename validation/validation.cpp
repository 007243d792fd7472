#include "validation/validation.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <regex>
#include <sstream>

#include "models/memory.hpp"
#include "models/pipeline.hpp"
#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"
#include "units/units.hpp"
#include "validation/conventions.hpp"
#include "validation/hardware_pairs.hpp"
#include "validation/holdout_split.hpp"
#include "validation/release_spread.hpp"
#include "validation/row_recipes.hpp"
#include "validation/validation_amd.hpp"
#include "validation/validation_moe.hpp"
#include "validation/validation_precision.hpp"
#include "validation/validation_row.hpp"

namespace clustersim::studies {
namespace {

using Row = std::map<std::string, std::string>;
using namespace row_cells;

struct Hardware {
  const char* profile = nullptr;  ///< nullptr: no profile
  const char* assumption = nullptr;
  const char* flag = nullptr;
  const char* reason = nullptr;
};

Hardware hardware_for(const std::string& gpu_type) {
  if (gpu_type == "A100-40G") return {"a100-40gb"};
  if (gpu_type == "A100-80G") return {"a100-80gb"};
  if (gpu_type == "A100 (memory not stated)")
    return {"a100-40gb", "A100 memory not stated: 40 GB (the only DGX A100 in 2020)"};
  if (gpu_type == "V100-32G")
    return {"v100-sxm2", nullptr, "v100-sxm2 profile partly estimated (no V100 GEMM measurement in hardware.md)"};
  if (gpu_type == "H100-SXM") return {"h100-sxm"};
  if (gpu_type == "H100-80G (form factor not stated)") return {"h100-sxm", "H100 80GB form factor not stated: SXM"};
  if (gpu_type == "H100-96G-HBM2e (500W)" || gpu_type == "H100-94G-HBM2e (lower TDP)")
    return {"h100-sxm-hbm2e-500w", nullptr, "lower-power H100 HBM2e part (profile clocks/bandwidth partly estimated)"};
  if (gpu_type == "H200") return {"h200-sxm"};
  if (gpu_type == "B200") return {"b200"};
  if (gpu_type == "B300") return {"b300"};
  if (gpu_type == "H800") return {"h800"};
  if (gpu_type == "GB200") return {"gb200"};
  if (gpu_type == "GB300")
    return {"gb300", nullptr, "gb300 profile partly estimated (GEMM anchors borrowed from GB200: no GB300 MAMF row)"};
  // AMD: the profiles' attention and memory-bound kernels come from NVIDIA rows scaled by peak.
  if (gpu_type == "MI325X")
    return {"mi325x", nullptr, "mi325x profile partly estimated (attention and memory-bound kernels from NVIDIA rows)"};
  if (gpu_type.rfind("MI300X", 0) == 0)
    return {"mi300x", "MI300X (the blog says MI300)", "mi300x profile partly estimated (attention and memory-bound kernels from NVIDIA rows)"};
  return {nullptr, nullptr, nullptr, nullptr};
}

// The node's scale-out bandwidth when the source states it ("400Gbps inter-node", "3.2Tbps
// inter-node", "1600 Gbps RoCE node-node"), in bytes/s (the sources quote bit/s); 0 when not stated.
units::BytesPerSecond stated_node_network_bandwidth(const std::string& hw_notes) {
  const std::string n = lower(hw_notes);
  for (const char* unit : {"gbps", "tbps"}) {
    const auto at = n.find(unit);
    if (at == std::string::npos) continue;
    if (n.find("inter-node", at) == std::string::npos && n.find("node-node", at) == std::string::npos) continue;
    std::size_t start = at;
    while (start > 0 && (std::isdigit(static_cast<unsigned char>(n[start - 1])) || n[start - 1] == '.' || n[start - 1] == ' '))
      --start;
    const double v = std::atof(n.substr(start, at - start).c_str());
    if (v > 0) return units::from_bits_per_second(v * (unit[0] == 't' ? 1e12 : 1e9));
  }
  return units::BytesPerSecond(0);
}

}  // namespace

std::string family_of(const std::string& id) {
  const auto dash = id.rfind('-');
  return dash == std::string::npos ? id : id.substr(0, dash);
}

namespace {

// Quality flags, the hardware profile, and rows this converter cannot express.
// False (with out->reason set) when the row cannot be simulated.
bool screen_row(const Row& r, RowScenario* out, Hardware* hw_out) {
  auto assume = [&](std::string what) { out->assumptions.push_back(std::move(what)); };
  auto fail = [&](std::string why) {
    out->reason = std::move(why);
    return false;
  };
  // Quality flags (tests/validation/README.md "Caveats"): shown, kept out of headline figures.
  const std::string name = field(r, "model_name");
  if (contains(name, "proxy")) out->flags.push_back("proxy model with reduced layer count");
  if (contains(field(r, "notes"), "approximate")) out->flags.push_back("measurement is approximate");

  if (number(r, "measured_tps_gpu") <= 0) return fail("no measured tokens/s per GPU (measured_tps_gpu blank)");

  const Hardware hw = *hw_out = hardware_for(field(r, "gpu_type"));
  if (hw.reason) return fail(hw.reason);
  if (!hw.profile) return fail(fmt::format("no hardware profile for gpu_type '{}'", field(r, "gpu_type")));
  if (hw.assumption) assume(hw.assumption);
  if (hw.flag) out->flags.push_back(hw.flag);

  // MoE rows: the source's own inconsistency marks (README_moe: "FLAG:" in notes) as quality flags.
  if (is_moe_row(r)) {
    const std::string notes = field(r, "notes");
    if (const auto at = notes.find("FLAG:"); at != std::string::npos)
      out->flags.push_back("source flag:" + notes.substr(at + 5, notes.find_first_of(".;", at) - at - 5));
  }
  return true;
}

// The model section of the row's scenario; false (with out->reason) when the architecture is incomplete.
bool model_patch(const Row& r, RowScenario* out, scenarios::ScenarioPatch* y, long* layers_out) {
  auto assume = [&](std::string what) { out->assumptions.push_back(std::move(what)); };
  const std::string name = field(r, "model_name");
  // Architecture.
  const long layers = integer(r, "layers"), hidden = integer(r, "hidden"), heads = integer(r, "heads");
  if (!layers || !hidden || !heads) return out->reason = "architecture incomplete (layers/hidden/heads blank)", false;
  long kv_heads = integer(r, "kv_heads");
  if (!kv_heads) kv_heads = heads;
  long ffn = integer(r, "ffn_hidden");
  if (!ffn) ffn = 4 * hidden, assume("ffn_hidden not stated: 4*hidden");
  long vocab = integer(r, "vocab");
  if (!vocab) vocab = 51200, assume("vocab not stated: 51200 (GPT-2 BPE padded)");
  const bool llama = contains(name, "llama");
  const bool rope = llama || contains(name, "nemotron");
  const bool tied = !llama && !contains(name, "nemotron");  // GPT (Megatron) and MPT tie them
  *layers_out = layers;
  y->set("model.name", name).set("model.layers", layers).set("model.hidden", hidden).set("model.heads", heads);
  y->set("model.kv_heads", kv_heads).set("model.ffn_hidden", ffn).set("model.vocab", vocab);
  y->set("model.activation", llama ? "swiglu" : "gelu").set("model.position", rope ? "rope" : "learned");
  y->set("model.tied_embeddings", tied);
  return true;
}

// ZeRO stage from the row's optimizer-sharding text, else the family's stack default.
int zero_stage_of(const Row& r, const FamilyConventions& conv, RowScenario* out) {
  auto assume = [&](std::string what) { out->assumptions.push_back(std::move(what)); };
  // The column's name differs between the published CSVs.
  std::string zero_text = field(r, "zero_stage_fsdp");
  for (const char* alt : {"zero_or_fsdp", "zero_or_dist_opt"})
    if (zero_text.empty()) zero_text = field(r, alt);
  int zero = conv.zero_stage;
  // "Megatron distributed optimizer (FSDP=0)" names FSDP to say it is off: read the negations first.
  const bool no_fsdp = contains(zero_text, "no fsdp") || contains(zero_text, "fsdp=0");
  if (contains(zero_text, "shard_grad_op") || contains(zero_text, "zero-2")) zero = 2;
  else if (no_fsdp && contains(zero_text, "distributed optimizer")) zero = 1;
  else if (no_fsdp) assume(fmt::format("no FSDP: ZeRO-{} (the stack's default)", zero));
  else if (contains(zero_text, "fsdp") || contains(zero_text, "zero-3") || contains(zero_text, "full_shard")) zero = 3;
  else if (contains(zero_text, "distributed optimizer") || contains(zero_text, "zero-1")) zero = 1;
  else if (contains(zero_text, "none")) zero = 0;
  else if (zero_text.empty() && zero > 0) assume(fmt::format("optimizer sharding not stated: ZeRO-{} (stack default)", zero));
  return zero;
}

// Sequences per micro-batch: as published, torchtitan's pp split, or the whole local batch.
long micro_batch_of(const Row& r, const std::string& family, long pp, long dp, long global_batch, RowScenario* out) {
  auto assume = [&](std::string what) { out->assumptions.push_back(std::move(what)); };
  long micro = integer(r, "micro_batch");
  if (family == "TORCHTITAN" && pp > 1 && micro % pp == 0 && contains(field(r, "notes"), "before pp microbatching")) {
    // torchtitan splits a rank's local batch into pipeline_parallel_microbatches micro-batches,
    // which defaults to the number of pipeline stages (torchtitan config help, Dec 2024).
    micro /= pp;
    assume(fmt::format("local batch split into pp = {} micro-batches of {} (torchtitan's default)", pp, micro));
  }
  if (!micro) {
    if (pp == 1 && dp > 0 && global_batch % dp == 0) {
      micro = global_batch / dp;
      assume(fmt::format("micro_batch not stated: whole local batch ({}) in one micro-batch", micro));
    } else {
      micro = 1;
      assume("micro_batch not stated: 1");
    }
  }
  return micro;
}

// A published batch-size ramp, "3072->15360 sequences (ramp over first 469B tokens)": the batch
// grows from `from` to `to` sequences over the run's first `tokens` tokens.
struct PublishedRamp {
  long from = 0, to = 0;
  double tokens = 0;  ///< 0: the ramp's length is not published
};
std::optional<PublishedRamp> published_ramp(const std::string& cell) {
  static const std::regex sizes(R"((\d+)\s*->\s*(\d+))"), length(R"(over first ([\d.]+)\s*([BT]) tokens)");
  std::smatch m;
  if (!std::regex_search(cell, m, sizes)) return std::nullopt;
  PublishedRamp ramp{std::stol(m[1].str()), std::stol(m[2].str())};
  if (std::regex_search(cell, m, length)) ramp.tokens = std::stod(m[1].str()) * (m[2].str() == "T" ? 1e12 : 1e9);
  return ramp;
}

// The parallelism keys after tp, pp, cp, zero_stage and vpp: an uneven pipeline split, sequence
// parallelism and TP overlap.
scenarios::ScenarioPatch parallelism_extras(const Row& r, const FamilyConventions& conv, long tp, long pp, long vpp,
                                            long layers, RowScenario* out) {
  auto assume = [&](std::string what) { out->assumptions.push_back(std::move(what)); };
  scenarios::ScenarioPatch y;
  // Megatron's account_for_embedding/loss_in_pipeline_split: the embedding and the loss each
  // take one layer's place, so 126 layers split as 128 over the virtual stages, one fewer on the
  // first and the last (the NeMo Llama-3.1-405B recipes).
  // The rule is models::uneven_stage_layers' (its `megatron` case); a published row states it
  // where its stack applies it, other uneven splits are left to the loader.
  const long vstages = pp * std::max(1L, vpp);
  const models::UnevenSplit split = vstages > 1 && layers % vstages != 0
                                        ? models::uneven_stage_layers(int(layers), int(vstages))
                                        : models::UnevenSplit{};
  if (split.megatron) {
    y.set("parallelism.pp_layers", scenarios::PatchList(split.layers.begin(), split.layers.end()));
    assume("uneven pipeline split: embedding and loss each counted as one layer (Megatron account_for_*_in_pipeline_split)");
  }
  if (tp > 1) {
    const std::string sp = field(r, "sp");
    bool sequence_parallel = conv.sequence_parallel_with_tp;
    if (sp == "y") sequence_parallel = true;
    else if (sp == "n") sequence_parallel = false;
    else if (sequence_parallel) assume("sequence parallelism not stated: on (stack default with tp > 1)");
    if (sequence_parallel) y.set("parallelism.sequence_parallel", true);
    if (conv.tp_comm_overlap) {
      y.set("parallelism.tp_comm_overlap", true);
      assume("TP communication overlapped with GEMMs (stack default, Transformer Engine userbuffers)");
    }
  }
  return y;
}

// The family's "selective" is whole-block checkpointing of some blocks (fms-fsdp
// selective_checkpointing, family_conventions.csv): full recompute of the fewest blocks per
// stage with which the memory model fits the row in HBM (every block when none fits), found by
// bisection (the peak falls as more blocks are recomputed). Not fitted to throughput.
void recompute_fewest_blocks(const std::string& id, RowScenario* out) {
  const auto* mode = out->scenario.find("training.recompute");
  if (!mode || *mode != scenarios::PatchValue(std::string("selective"))) return;
  out->scenario.set("training.recompute", "full");
  const auto fits = [&](int n) {
    scenarios::ScenarioPatch blocks = out->scenario;
    blocks.set("training.recompute_layers", n);
    const scenarios::Scenario sc = scenarios::load_scenario(blocks, "published.csv:" + id);
    return models::estimate_memory(sc.model, sc.training, sc.parallel, sc.gpu).fits();
  };
  try {
    const scenarios::Scenario sc = scenarios::load_scenario(out->scenario, "published.csv:" + id);
    const auto chunks = models::virtual_stage_layers(sc.model.layers, sc.parallel);
    const int most = *std::max_element(chunks.begin(), chunks.end());  // every block
    int lo = 0, hi = most;
    if (!fits(hi)) {
      out->assumptions.push_back(fmt::format("selective AC (whole blocks): even all {} blocks recomputed do not fit; "
                                             "all recomputed", most));
      return;
    }
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (fits(mid)) hi = mid;
      else lo = mid + 1;
    }
    out->scenario.set("training.recompute_layers", lo);
    out->assumptions.push_back(fmt::format("selective AC (whole blocks): {} of {} blocks per stage fully recomputed, the "
                                           "fewest that fit in memory", lo, most));
  } catch (const scenarios::ScenarioError&) {
    // The row's own load in validate_row reports the error.
  }
}

}  // namespace

RowScenario row_scenario(const Row& published) {
  RowScenario out;
  const Row r = with_projection_batch(published, &out.assumptions);  // AMD rows: batch cells from AMD's commands
  const std::string id = field(r, "id");
  const std::string family = family_of(id);
  const FamilyConventions conv = conventions_for(family);
  auto assume = [&](std::string what) { out.assumptions.push_back(std::move(what)); };
  auto fail = [&](std::string why) {
    out.reason = std::move(why);
    out.scenario = {};
    return out;
  };
  Hardware hw;
  scenarios::ScenarioPatch model;
  long layers = 0;
  const bool moe = is_moe_row(r);
  if (!screen_row(r, &out, &hw)) return fail(out.reason);
  const scenarios::ScenarioPatch precision = precision_patch(r, conv, &out);
  if (!(moe ? moe_model_patch(r, &out, &model, &layers) : model_patch(r, &out, &model, &layers))) return fail(out.reason);
  const long seq = integer(r, "seq_len");
  if (!seq) return fail("seq_len blank");

  // Layout.
  // A paper that does not publish its cluster size may be run at one its row recipe assumes (and
  // labels "not published").
  const long gpus =
      integer(r, "num_gpus") ? integer(r, "num_gpus") : long(row_recipe_number(id, "cluster.gpus").value_or(0));
  if (!gpus) return fail("num_gpus blank");
  long tp = integer(r, "tp"), pp = integer(r, "pp"), cp = integer(r, "cp");
  if (!tp && !pp && field(r, "dp").empty()) return fail("parallel layout (tp/pp/dp) not published");
  if (!tp) tp = 1, assume("tp blank: 1");
  if (!pp) pp = 1;
  if (!cp) cp = 1;
  const long vpp = integer(r, "vpp");
  const int zero = zero_stage_of(r, conv, &out);

  // Batch. A ramp's row is a whole-run average: the run is simulated with its ramp (days to train
  // integrate the step time over it) over the run's tokens, which its row recipe gives.
  std::optional<PublishedRamp> ramp = published_ramp(field(r, "global_batch"));
  // The ramp's length from the row recipe where the table's cell leaves it out (the paper gives it).
  if (ramp && ramp->tokens <= 0) ramp->tokens = row_recipe_number(id, "training.batch_ramp.tokens").value_or(0);
  if (ramp && ramp->tokens <= 0)
    return fail(fmt::format("batch-size ramp ({}) of unpublished length: a whole-run average over an unknown ramp",
                            field(r, "global_batch")));
  if (ramp && !row_recipe_sets(id, "training.tokens"))
    return fail("batch-size ramp without the run's token count (data/validation/row_recipes.csv training.tokens)");
  const long global_batch = ramp ? ramp->to : integer(r, "global_batch");
  if (!global_batch) return fail("global_batch not published");
  const long dp = gpus / std::max(1L, tp * pp * cp);
  const long micro = micro_batch_of(r, family, pp, dp, global_batch, &out);
  std::string recompute = conv.recompute;
  const std::string rc = field(r, "recompute");
  if (contains(rc, "full")) recompute = "full";
  else if (contains(rc, "selective")) recompute = "selective";
  else if (contains(rc, "none")) recompute = "none";
  else if (moe && !recipe_recompute(r).mode.empty()) recompute = recipe_recompute(r).mode;
  else if (moe && !moe_recompute_modules(r).empty()) recompute = "selective";
  else if (!row_recipe_sets(id, "training.recompute")) assume(fmt::format("recompute not stated: {}", recompute));

  // Eager PyTorch (no torch.compile) where the source says so: IBM's "mode=no-compile", or a
  // torchtitan techniques list without torch.compile.
  const std::string other = field(r, "other_metrics");
  const bool eager = contains(other, "no-compile") ||
                     (contains(other, "techniques=") && !contains(other, "compile"));
  if (eager) assume("eager PyTorch (no torch.compile): reference RMSNorm/RoPE/SwiGLU run unfused");

  scenarios::ScenarioPatch& y = out.scenario;
  y.set("name", id + " " + field(r, "model_name"));
  y.append(model);
  y.set("hardware", hw.profile);
  const units::BytesPerSecond node_bw = stated_node_network_bandwidth(field(r, "hw_notes"));
  if (node_bw.si() > 0) {
    // The profile's default topology, with the source's stated scale-out bandwidth over 8 NICs.
    y.set("network.node.nic_bandwidth", fmt::format("{} GB/s", (node_bw / 8.0).si() / 1e9));
    y.set("network.node.nics_per_node", 8);
  }
  if (!conv.placement.empty()) {
    scenarios::PatchList order;
    std::stringstream names(conv.placement);
    for (std::string dim; std::getline(names, dim, ',');) order.emplace_back(dim.substr(dim.find_first_not_of(' ')));
    y.set("network.placement", order);
    assume(fmt::format("rank order {} innermost first (the stack's default)", conv.placement));
  }
  y.set("cluster.gpus", gpus);
  y.set("parallelism.tp", tp).set("parallelism.pp", pp).set("parallelism.cp", cp).set("parallelism.zero_stage", zero);
  if (vpp > 1) y.set("parallelism.vpp", vpp);
  y.append(parallelism_extras(r, conv, tp, pp, vpp, layers, &out));
  if (moe) y.append(moe_parallel_patch(r, &out));
  y.set("training.seq_len", seq).set("training.global_batch", global_batch).set("training.micro_batch", micro);
  if (ramp) {
    y.set("training.batch_ramp.from", ramp->from).set("training.batch_ramp.to", ramp->to);
    y.set("training.batch_ramp.tokens", ramp->tokens);
    assume(
        fmt::format("batch ramp {} -> {} sequences over {:g} tokens; predicted: the whole run's mean tokens/s "
                    "(no failures or checkpoints), as the published GPU-hours average it",
                    ramp->from, ramp->to, ramp->tokens));
  }
  y.append(precision);
  y.set("training.recompute", recompute);
  if (moe) {
    if (const auto modules = moe_recompute_modules(r); !modules.empty())
      y.set("training.recompute_modules", scenarios::PatchList(modules.begin(), modules.end()));
    y.append(moe_training_patch(r, conv, &out));
  } else {
    y.set("training.flash_attention", conv.flash_attention);
    if (conv.flash_attention && !conv.attention_impl.empty()) {
      y.set("training.attention_impl", conv.attention_impl);
      assume(fmt::format("attention kernel {} (the stack's default)", conv.attention_impl));
    }
  }
  if (!conv.cross_entropy.empty()) {
    y.set("training.cross_entropy", conv.cross_entropy);
    assume(fmt::format("cross-entropy {} (the stack's loss kernel)", conv.cross_entropy));
  }
  if (eager) y.set("training.fused_elementwise", false);
  if (!moe && recompute == "selective" && conv.selective_recompute == "fewest_blocks_that_fit")
    recompute_fewest_blocks(id, &out);
  const scenarios::ScenarioPatch recipe = row_recipe_patch(id, &out.assumptions);
  for (const auto& e : recipe.entries()) y.set(e.path, e.value);
  return out;
}

RowOutcome validate_row(const Row& r) {
  RowOutcome o;
  o.id = field(r, "id");
  o.family = family_of(o.id);
  o.model_name = field(r, "model_name");
  o.gpu_type = field(r, "gpu_type");
  auto part = [&](const char* k) { return field(r, k).empty() ? std::string("-") : field(r, k); };
  o.layout = fmt::format("{}gpu tp{} pp{} cp{} dp{}", part("num_gpus"), part("tp"), part("pp"), part("cp"), part("dp"));
  if (is_moe_row(r)) o.layout += fmt::format(" ep{}", part("ep"));
  o.measured_tps_gpu = number(r, "measured_tps_gpu");
  o.holdout = in_holdout_split(r);
  RowScenario rs = row_scenario(r);
  o.flags = rs.flags;
  o.assumptions = rs.assumptions;
  if (!rs.reason.empty()) {
    o.reason = rs.reason;
    return o;
  }
  try {
    const scenarios::Scenario sc = scenarios::load_scenario(rs.scenario, "published.csv:" + o.id);
    const scenarios::Report rep = scenarios::simulate(sc);
    if (sc.cluster.segment_assumed)  // the loader's NVL72 default (scenarios::nvl_segment_gpus)
      o.assumptions.push_back(fmt::format("SLURM --segment {} trays: {} GPUs per NVLink rack (the loader's default, "
                                          "Megatron-Bridge executors.py)", sc.cluster.gpus_per_node / 4, sc.cluster.gpus_per_node));
    o.simulated = true;
    // A ramp's row: the whole run's mean (its steps at every batch of the ramp, then the full batch).
    o.predicted_tps_gpu = sc.training.batch_ramp.enabled()
                              ? sc.training.tokens / (rep.days_to_train_ideal * 86400.0) / rep.num_gpus
                              : rep.tokens_per_s_per_gpu;
    o.predicted_mfu = rep.mfu * o.predicted_tps_gpu / rep.tokens_per_s_per_gpu;
    o.fits_memory = rep.memory.fits();
    o.error = (o.predicted_tps_gpu - o.measured_tps_gpu) / o.measured_tps_gpu;
  } catch (const scenarios::ScenarioError& e) {
    // Drop the "published.csv:ID[:line:col]: " prefix; the table already names the row.
    std::string msg = e.what();
    const std::string prefix = "published.csv:" + o.id;
    if (msg.rfind(prefix, 0) == 0) {
      const auto colon_space = msg.find(": ", prefix.size());
      if (colon_space != std::string::npos) msg = msg.substr(colon_space + 2);
    }
    o.reason = msg;
  }
  return o;
}

ErrorStats error_stats(const std::vector<const RowOutcome*>& rows) {
  ErrorStats s;
  s.count = int(rows.size());
  if (rows.empty()) return s;
  std::vector<double> abs;
  for (const RowOutcome* r : rows) {
    abs.push_back(std::abs(r->error));
    s.mape += std::abs(r->error);
    s.bias += r->error;
    if (std::abs(r->error) > std::abs(s.worst) || s.worst_id.empty()) s.worst = r->error, s.worst_id = r->id;
  }
  s.mape /= double(rows.size());
  s.bias /= double(rows.size());
  std::sort(abs.begin(), abs.end());
  const std::size_t n = abs.size();
  s.median_abs = n % 2 ? abs[n / 2] : 0.5 * (abs[n / 2 - 1] + abs[n / 2]);
  return s;
}

namespace {
FamilySummary summarize(const std::string& family, const std::vector<const RowOutcome*>& rows) {
  FamilySummary f;
  f.family = family;
  f.rows = int(rows.size());
  std::vector<const RowOutcome*> head, flagged;
  for (const RowOutcome* r : rows) {
    if (!r->simulated) continue;
    ++f.simulated;
    (r->headline() ? head : flagged).push_back(r);
  }
  f.headline = error_stats(head);
  f.flagged = error_stats(flagged);
  return f;
}
}  // namespace

ValidationSummary validate_table(const CsvTable& table, const std::string& id_prefix) {
  ValidationSummary s;
  for (const auto& row : table.rows) {
    const std::string id = field(row, "id");
    if (!id_prefix.empty() && id.rfind(id_prefix, 0) != 0) continue;
    s.rows.push_back(validate_row(row));
  }
  // README_moe caveat 2: the latest release of a configuration is the figure of record.
  const std::vector<ReleasedRow> released = released_rows(table);
  const auto superseded = superseded_rows(released);
  for (auto& r : s.rows)
    if (auto it = superseded.find(r.id); it != superseded.end())
      r.flags.push_back(fmt::format("older release (superseded by {})", it->second));
  std::map<std::string, std::vector<const RowOutcome*>> by_family;
  std::vector<const RowOutcome*> all;
  for (const auto& r : s.rows) by_family[r.family].push_back(&r), all.push_back(&r);
  for (const auto& [fam, rows] : by_family) s.families.push_back(summarize(fam, rows));
  s.overall = summarize("overall", all);
  std::vector<const RowOutcome*> split;
  for (const auto& r : s.rows)
    if (r.holdout && r.headline()) split.push_back(&r);
  if (!split.empty()) {
    s.holdout_split = error_stats(split);
    s.holdout_rule = holdout_description(split.front()->id);
  }
  s.release_spread = release_spread(released, s.rows);
  s.hardware_pairs = hardware_pairs(table, s.rows);
  return s;
}

}  // namespace clustersim::studies
