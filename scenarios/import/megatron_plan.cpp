// Megatron-LM arguments -> the cluster, parallelism and training sections of a scenario.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <regex>

#include "scenarios/error.hpp"
#include "scenarios/import/flag_map.hpp"
#include "scenarios/import/importers.hpp"
#include "scenarios/import/megatron_mapping.hpp"
#include "scenarios/import/shell_words.hpp"

namespace clustersim::scenarios::importers {
namespace {

using fmt::format;

// The integer value of a shell variable, when it has one.
std::optional<long long> numeric_var(const ShellWords& sh, std::initializer_list<const char*> names, std::string* which) {
  for (const char* n : names) {
    auto it = sh.vars.find(n);
    if (it == sh.vars.end() || it->second.size() != 1) continue;
    char* end = nullptr;
    const long long v = std::strtoll(it->second[0].c_str(), &end, 10);
    if (!it->second[0].empty() && *end == '\0' && v > 0) {
      *which = n;
      return v;
    }
  }
  return std::nullopt;
}

long long flag_or(const FlagMap& f, const std::string& name, long long fallback) {
  const long long v = f.integer(name).value_or(fallback);
  if (v < 1) throw ScenarioError(format("{} {}: must be at least 1", f.where(name), v));
  return v;
}

// torchrun's --nnodes takes N or MIN:MAX.
std::optional<long long> nnodes_of(const FlagMap& f) {
  auto t = f.text("nnodes");
  if (!t) return std::nullopt;
  const std::size_t colon = t->find(':');
  if (colon == std::string::npos) return f.integer("nnodes");
  const long long lo = std::atoll(t->substr(0, colon).c_str()), hi = std::atoll(t->substr(colon + 1).c_str());
  if (lo != hi || lo < 1) throw ScenarioError(format("{}: --nnodes {}: an elastic range; give the node count with --gpus", f.source(), *t));
  return lo;
}

// --pipeline-model-parallel-layout: one string per virtual pipeline stage, in model order (stage i
// runs on pipeline rank i % pp), of E (embedding), t (a transformer layer), m (MTP), L (loss), as
// Megatron-Core's PipelineParallelLayerLayout.parse_str_to_list reads it: commas dropped, "(..)*n"
// then "x*n" unrolled, split at '|'.
std::vector<std::string> layout_stages(const FlagMap& f) {
  std::string s = f.text("pipeline-model-parallel-layout").value_or("");
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  for (const std::regex& re : {std::regex(R"(\(([^)]+)\)\*(\d+))"), std::regex(R"((.)\*(\d+))")}) {
    std::string unrolled;
    auto last = s.cbegin();
    for (std::sregex_iterator it(s.begin(), s.end(), re), end; it != end; ++it) {
      unrolled.append(last, s.cbegin() + it->position());
      const long long n = std::stoll((*it)[2].str());
      if (n > 100000)
        throw ScenarioError(
            format("{}: a repeat of {} is more than a model has layers", f.where("pipeline-model-parallel-layout"), n));
      for (long long k = 0; k < n; ++k) unrolled += (*it)[1].str();
      last = s.cbegin() + it->position() + it->length();
    }
    unrolled.append(last, s.cend());
    s = unrolled;
  }
  std::vector<std::string> stages(1);
  for (char c : s) {
    if (c == '|') stages.emplace_back();
    else if (c == 'E' || c == 't' || c == 'm' || c == 'L') stages.back() += c;
    else if (c != ' ')
      throw ScenarioError(
          format("{}: '{}' is not a layer (E embedding, t transformer layer, m MTP, L loss, | between stages)",
                 f.where("pipeline-model-parallel-layout"), c));
  }
  return stages;
}

// Megatron's uneven splits (megatron/core/transformer/transformer_block.py get_num_layers_to_build):
// --decoder-first/last-pipeline-num-layers fix the first/last stage and split the rest evenly; the
// account-for-embedding/loss flags count the embedding and the loss as a layer each. With vpp model
// chunks per stage each stage's layers split evenly over its chunks, and the embedding/loss layer
// comes off the first/last chunk. Written as pp*vpp entries in model order (chunk c of stage s at
// c*pp + s), as the loader reads them.
void set_pp_layers(Imported& out, const FlagMap& f, long long layers, long long pp, long long vpp) {
  if (f.has("pipeline-model-parallel-layout")) {
    std::vector<long long> split;
    for (const std::string& stage : layout_stages(f)) split.push_back(std::count(stage.begin(), stage.end(), 't'));
    const long long sum = std::accumulate(split.begin(), split.end(), 0LL);
    if (sum != layers)
      throw ScenarioError(format("{}: the layout places {} transformer layers but the model has {}",
                                 f.where("pipeline-model-parallel-layout"), sum, layers));
    if (pp > 1)
      out.set("parallelism.pp_layers", format("[{}]", fmt::join(split, ", ")),
              f.origin("pipeline-model-parallel-layout"));
    return;
  }
  const auto first = f.integer("decoder-first-pipeline-num-layers"), last = f.integer("decoder-last-pipeline-num-layers");
  const bool emb = f.has("account-for-embedding-in-pipeline-split"), loss = f.has("account-for-loss-in-pipeline-split");
  if (pp < 2 || !(first || last || emb || loss)) return;
  std::vector<long long> stage(static_cast<std::size_t>(pp));
  std::string origin;
  if (first || last) {
    const long long inner = pp - (first ? 1 : 0) - (last ? 1 : 0);
    const long long rest = layers - first.value_or(0) - last.value_or(0);
    if (rest < 0 || (inner > 0 && rest % inner != 0) || (inner == 0 && rest != 0))
      throw ScenarioError(format("{}: --decoder-first/last-pipeline-num-layers leave {} layers for {} stages", f.source(), rest, inner));
    for (auto& s : stage) s = inner > 0 ? rest / inner : 0;
    if (first) stage.front() = *first;
    if (last) stage.back() = *last;
    const bool fields =
        f.translated("decoder-first-pipeline-num-layers") || f.translated("decoder-last-pipeline-num-layers");
    origin = fields ? f.origins({"decoder-first-pipeline-num-layers", "decoder-last-pipeline-num-layers"})
                    : "--decoder-first/last-pipeline-num-layers";
  } else {
    const long long total = layers + (emb ? 1 : 0) + (loss ? 1 : 0);
    if (total % pp != 0) throw ScenarioError(format("{}: {} layers with the embedding/loss counted do not split over {} stages", f.source(), total, pp));
    for (auto& s : stage) s = total / pp;
    const bool fields =
        f.translated("account-for-embedding-in-pipeline-split") || f.translated("account-for-loss-in-pipeline-split");
    origin = fields ? f.origins({"account-for-embedding-in-pipeline-split", "account-for-loss-in-pipeline-split"})
                    : "--account-for-embedding/loss-in-pipeline-split";
  }
  std::vector<long long> split(static_cast<std::size_t>(pp * vpp));
  for (long long s = 0; s < pp; ++s) {
    if (stage[std::size_t(s)] % vpp != 0)
      throw ScenarioError(format("{}: pipeline stage {} has {} layers, not divisible into {} model chunks", f.source(), s, stage[std::size_t(s)], vpp));
    for (long long c = 0; c < vpp; ++c) split[std::size_t(c * pp + s)] = stage[std::size_t(s)] / vpp;
  }
  if (!(first || last)) {
    split.front() -= emb ? 1 : 0;
    split.back() -= loss ? 1 : 0;
  }
  for (long long n : split)
    if (n < 1) throw ScenarioError(format("{}: {} leaves a pipeline stage without layers", f.source(), origin));
  out.set("parallelism.pp_layers", format("[{}]", fmt::join(split, ", ")), origin);
}

// --num-layers-per-virtual-pipeline-stage (layers per chunk) or --num-virtual-stages-per-pipeline-rank
// (chunks per stage; --virtual-pipeline-model-parallel-size in older releases).
long long virtual_stages(const FlagMap& f, long long layers, long long pp, std::string* origin) {
  if (f.has("pipeline-model-parallel-layout")) {  // the layout's stages are pp x vpp (PipelineParallelLayerLayout)
    const long long stages = static_cast<long long>(layout_stages(f).size());
    if (stages % pp != 0)
      throw ScenarioError(format("{}: {} stages do not divide over {} pipeline ranks",
                                 f.where("pipeline-model-parallel-layout"), stages, pp));
    *origin = f.origin("pipeline-model-parallel-layout") + format(" ({} stages over pp {})", stages, pp);
    return stages / pp;
  }
  if (auto per = f.integer("num-layers-per-virtual-pipeline-stage")) {
    if (*per < 1 || layers % (pp * *per) != 0)
      throw ScenarioError(format("{}: --num-layers-per-virtual-pipeline-stage {} does not divide {} layers over {} stages", f.source(), *per, layers, pp));
    *origin = f.origin("num-layers-per-virtual-pipeline-stage") + " (layers / pp / that)";
    return layers / (pp * *per);
  }
  for (const char* name : {"num-virtual-stages-per-pipeline-rank", "virtual-pipeline-model-parallel-size"})
    if (f.has(name)) {
      *origin = f.origin(name);
      return flag_or(f, name, 1);
    }
  return 1;
}

// Megatron-FSDP's --data-parallel-sharding-strategy (default optim_grads_params) as a ZeRO stage.
void set_zero_stage(Imported& out, const FlagMap& f) {
  const bool fsdp = f.has("use-torch-fsdp2") || f.has("use-custom-fsdp") || f.has("use-megatron-fsdp");
  if (fsdp) {
    const std::string strategy = f.text("data-parallel-sharding-strategy").value_or("optim_grads_params");
    static const std::map<std::string, const char*> kStage = {
        {"no_shard", "0"}, {"optim", "1"}, {"optim_grads", "2"}, {"optim_grads_params", "3"}};
    auto it = kStage.find(strategy);
    if (it == kStage.end())
      throw ScenarioError(format("{} {}: expected no_shard, optim, optim_grads or optim_grads_params",
                                 f.where("data-parallel-sharding-strategy"), strategy));
    if (!f.has("use-megatron-fsdp") && f.has("data-parallel-sharding-strategy"))
      out.warn("--data-parallel-sharding-strategy applies to --use-megatron-fsdp; read for the FSDP given");
    out.set("parallelism.zero_stage", it->second,
            format("FSDP with {}", f.origin_or("data-parallel-sharding-strategy",
                                               "Megatron-FSDP's default sharding optim_grads_params")));
    return;
  }
  const bool dist_opt = f.has("use-distributed-optimizer");
  out.set("parallelism.zero_stage", dist_opt ? "1" : "0",
          f.origin_or("use-distributed-optimizer", "Megatron default: no distributed optimizer"));
}

void set_bool(Imported& out, const FlagMap& f, const std::string& path, const std::string& flag, const char* default_why) {
  const bool on = f.has(flag);
  out.set(path, on ? "true" : "false", f.origin_or(flag, default_why));
}

}  // namespace

long long import_megatron_cluster(Imported& out, const FlagMap& f, const ShellWords& sh, const ImportOptions& opt,
                                  long long* gpus_per_node) {
  std::string var;
  auto nproc = f.integer("nproc-per-node");
  std::string nproc_origin = f.origin("nproc-per-node");
  if (!nproc && (nproc = numeric_var(sh, {"GPUS_PER_NODE", "NPROC_PER_NODE", "NUM_GPUS_PER_NODE"}, &var))) nproc_origin = "$" + var;
  auto nnodes = nnodes_of(f);
  std::string nnodes_origin = f.origin("nnodes");
  if (!nnodes && (nnodes = numeric_var(sh, {"NNODES", "NUM_NODES", "N_NODES"}, &var))) nnodes_origin = "$" + var;
  long long gpus = 0;
  if (opt.gpus > 0) {
    gpus = opt.gpus;
    out.set("cluster.gpus", format("{}", gpus), "--gpus on the import command line");
  } else if (auto ws = numeric_var(sh, {"WORLD_SIZE"}, &var)) {
    gpus = *ws;
    out.set("cluster.gpus", format("{}", gpus), "$WORLD_SIZE");
  } else if (nproc && nnodes) {
    gpus = *nproc * *nnodes;
    out.set("cluster.gpus", format("{}", gpus), format("{} x {}", nnodes_origin, nproc_origin));
  } else {
    throw ScenarioError(format("{}: the GPU count is not in the script (WORLD_SIZE, or torchrun's --nnodes and "
                               "--nproc-per-node); give it with `clustersim import megatron --gpus N`", f.source()));
  }
  if (opt.gpus_per_node > 0) {
    out.set("cluster.gpus_per_node", format("{}", opt.gpus_per_node), "--gpus-per-node on the import command line (the NVLink domain)");
    *gpus_per_node = opt.gpus_per_node;
  } else {
    if (nproc) out.set("cluster.gpus_per_node", format("{}", *nproc), nproc_origin);
    *gpus_per_node = nproc.value_or(0);
  }
  return gpus;
}

void import_megatron_parallelism(Imported& out, const FlagMap& f, long long layers, long long gpus_per_node) {
  const long long tp = flag_or(f, "tensor-model-parallel-size", 1), pp = flag_or(f, "pipeline-model-parallel-size", 1);
  out.set("parallelism.tp", format("{}", tp), f.origin_or("tensor-model-parallel-size", "Megatron default: 1"));
  out.set("parallelism.pp", format("{}", pp), f.origin_or("pipeline-model-parallel-size", "Megatron default: 1"));
  out.set("parallelism.cp", format("{}", flag_or(f, "context-parallel-size", 1)),
          f.origin_or("context-parallel-size", "Megatron default: 1"));
  if (gpus_per_node > 0 && tp > gpus_per_node) out.set("parallelism.tp_across_nodes", "true", "tensor parallelism wider than a node");
  if (f.has("num-experts")) {
    out.set("parallelism.ep", format("{}", flag_or(f, "expert-model-parallel-size", 1)),
            f.origin_or("expert-model-parallel-size", "Megatron default: 1"));
    out.set("parallelism.etp", format("{}", flag_or(f, "expert-tensor-parallel-size", tp)),
            f.origin_or("expert-tensor-parallel-size", "Megatron default: the tensor-parallel size"));
  }
  std::string vpp_origin;
  const long long vpp = virtual_stages(f, layers, pp, &vpp_origin);
  if (vpp > 1) {
    out.set("parallelism.schedule", "interleaved", "a virtual pipeline: Megatron's interleaved 1F1B");
    out.set("parallelism.vpp", format("{}", vpp), vpp_origin);
  }
  // Megatron overlaps the interleaved schedule's sends unless told not to and never overlaps the
  // others' (arguments.py: --no-overlap-p2p-communication, forced off without interleaving).
  if (pp > 1) {
    const bool overlap = vpp > 1 && !f.has("no-overlap-p2p-communication");
    out.set("parallelism.pp_comm_overlap", overlap ? "true" : "false",
            f.has("no-overlap-p2p-communication") ? f.origin("no-overlap-p2p-communication")
            : vpp > 1 ? "Megatron default: --overlap-p2p-communication with the interleaved schedule"
                      : "Megatron: no P2P overlap without the interleaved schedule");
  }
  set_pp_layers(out, f, layers, pp, vpp);
  set_bool(out, f, "parallelism.sequence_parallel", "sequence-parallel", "Megatron default: off");
  set_zero_stage(out, f);
  set_bool(out, f, "parallelism.tp_comm_overlap", "tp-comm-overlap", "Megatron default: off");
}

}  // namespace clustersim::scenarios::importers
