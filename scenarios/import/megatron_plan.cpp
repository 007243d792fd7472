// Megatron-LM arguments -> the cluster, parallelism and training sections of a scenario.
#include <fmt/format.h>

#include <cstdlib>

#include "scenarios/error.hpp"
#include "scenarios/import/flag_map.hpp"
#include "scenarios/import/importers.hpp"
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
  if (v < 1) throw ScenarioError(format("{}: --{} {}: must be at least 1", f.source(), name, v));
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

void set_pp_layers(Imported& out, const FlagMap& f, long long layers, long long pp) {
  const auto first = f.integer("decoder-first-pipeline-num-layers"), last = f.integer("decoder-last-pipeline-num-layers");
  const bool emb = f.has("account-for-embedding-in-pipeline-split"), loss = f.has("account-for-loss-in-pipeline-split");
  if (pp < 2 || !(first || last || emb || loss)) return;
  std::vector<long long> split(static_cast<std::size_t>(pp));
  std::string origin;
  if (first || last) {
    const long long inner = pp - (first ? 1 : 0) - (last ? 1 : 0);
    const long long rest = layers - first.value_or(0) - last.value_or(0);
    if (inner <= 0 || rest < 0 || rest % inner != 0)
      throw ScenarioError(format("{}: --decoder-first/last-pipeline-num-layers leave {} layers for {} stages", f.source(), rest, inner));
    for (auto& s : split) s = rest / inner;
    if (first) split.front() = *first;
    if (last) split.back() = *last;
    origin = "--decoder-first/last-pipeline-num-layers";
  } else {
    const long long total = layers + (emb ? 1 : 0) + (loss ? 1 : 0);
    if (total % pp != 0) throw ScenarioError(format("{}: {} layers with the embedding/loss counted do not split over {} stages", f.source(), total, pp));
    for (auto& s : split) s = total / pp;
    split.front() -= emb ? 1 : 0;
    split.back() -= loss ? 1 : 0;
    origin = "--account-for-embedding/loss-in-pipeline-split";
  }
  out.set("parallelism.pp_layers", format("[{}]", fmt::join(split, ", ")), origin);
}

void set_bool(Imported& out, const FlagMap& f, const std::string& path, const std::string& flag, const char* default_why) {
  const bool on = f.has(flag);
  out.set(path, on ? "true" : "false", on ? "--" + flag : default_why);
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
  if (nproc) out.set("cluster.gpus_per_node", format("{}", *nproc), nproc_origin);
  *gpus_per_node = nproc.value_or(0);
  return gpus;
}

void import_megatron_parallelism(Imported& out, const FlagMap& f, long long layers, long long gpus_per_node) {
  const long long tp = flag_or(f, "tensor-model-parallel-size", 1), pp = flag_or(f, "pipeline-model-parallel-size", 1);
  out.set("parallelism.tp", format("{}", tp), f.has("tensor-model-parallel-size") ? f.origin("tensor-model-parallel-size") : "Megatron default: 1");
  out.set("parallelism.pp", format("{}", pp), f.has("pipeline-model-parallel-size") ? f.origin("pipeline-model-parallel-size") : "Megatron default: 1");
  out.set("parallelism.cp", format("{}", flag_or(f, "context-parallel-size", 1)),
          f.has("context-parallel-size") ? f.origin("context-parallel-size") : "Megatron default: 1");
  if (gpus_per_node > 0 && tp > gpus_per_node) out.set("parallelism.tp_across_nodes", "true", "tensor parallelism wider than a node");
  if (f.has("num-experts")) {
    out.set("parallelism.ep", format("{}", flag_or(f, "expert-model-parallel-size", 1)),
            f.has("expert-model-parallel-size") ? f.origin("expert-model-parallel-size") : "Megatron default: 1");
    out.set("parallelism.etp", format("{}", flag_or(f, "expert-tensor-parallel-size", tp)),
            f.has("expert-tensor-parallel-size") ? f.origin("expert-tensor-parallel-size") : "Megatron default: the tensor-parallel size");
  }
  long long vpp = 1;
  if (auto per = f.integer("num-layers-per-virtual-pipeline-stage")) {
    if (*per < 1 || layers % (pp * *per) != 0)
      throw ScenarioError(format("{}: --num-layers-per-virtual-pipeline-stage {} does not divide {} layers over {} stages", f.source(), *per, layers, pp));
    vpp = layers / (pp * *per);
  } else {
    vpp = flag_or(f, "virtual-pipeline-model-parallel-size", 1);
  }
  if (vpp > 1) {
    out.set("parallelism.schedule", "interleaved", "a virtual pipeline: Megatron's interleaved 1F1B");
    out.set("parallelism.vpp", format("{}", vpp), f.has("num-layers-per-virtual-pipeline-stage")
                                                      ? f.origin("num-layers-per-virtual-pipeline-stage") + " (layers / pp / that)"
                                                      : f.origin("virtual-pipeline-model-parallel-size"));
  }
  set_pp_layers(out, f, layers, pp);
  set_bool(out, f, "parallelism.sequence_parallel", "sequence-parallel", "Megatron default: off");
  const bool fsdp = f.has("use-torch-fsdp2") || f.has("use-custom-fsdp") || f.has("use-megatron-fsdp");
  const bool dist_opt = f.has("use-distributed-optimizer");
  out.set("parallelism.zero_stage", fsdp ? "3" : dist_opt ? "1" : "0",
          fsdp ? "FSDP (--use-torch-fsdp2 / --use-megatron-fsdp)" : dist_opt ? "--use-distributed-optimizer" : "Megatron default: no distributed optimizer");
  set_bool(out, f, "parallelism.tp_comm_overlap", "tp-comm-overlap", "Megatron default: off");
}

}  // namespace clustersim::scenarios::importers
