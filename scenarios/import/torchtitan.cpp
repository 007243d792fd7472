// A torchtitan job file (TOML: [model], [training], [parallelism], [activation_checkpoint], [compile];
// converters and their sections in torchtitan_quantize.cpp) -> scenario keys. Defaults are torchtitan's own (torchtitan/config/job_config.py).
#include <fmt/format.h>

#include <toml++/toml.h>

#include <map>

#include "scenarios/error.hpp"
#include "scenarios/import/importers.hpp"
#include "scenarios/import/torchtitan_toml.hpp"
#include "scenarios/load_model.hpp"

namespace clustersim::scenarios::importers {
namespace {

using fmt::format;

}  // namespace

void import_torchtitan_precision(const toml::table& t, const std::string& src, Imported& out);

namespace {

struct Job {
  const toml::table& t;
  const ImportOptions& opt;
  Imported& out;

  template <class T>
  std::optional<T> get(std::string_view section, std::string_view key) const {
    return t[section][key].value<T>();
  }
  long long integer(std::string_view section, std::string_view key, long long fallback) const {
    return get<long long>(section, key).value_or(fallback);
  }
  std::string origin(std::string_view section, std::string_view key) const {
    const auto* node = t[section][key].node();
    if (!node) return "";
    std::string v;
    if (auto s = node->value<std::string>()) v = '"' + *s + '"';
    else if (node->is_boolean()) v = node->value<bool>().value_or(false) ? "true" : "false";
    else if (auto i = node->value<long long>()) v = std::to_string(*i);
    else v = "...";
    return format("[{}] {} = {}", section, key, v);
  }
  std::string origin_or(std::string_view section, std::string_view key, std::string_view fallback) const {
    const std::string o = origin(section, key);
    return o.empty() ? std::string(fallback) : o;
  }
};

// torchtitan's model name and flavor -> a clustersim model preset.
void import_model(const Job& j) {
  const std::string name = j.get<std::string>("model", "name").value_or("");
  const std::string flavor = j.get<std::string>("model", "flavor").value_or("");
  static const std::map<std::pair<std::string, std::string>, std::string> kPresets = {
      {{"llama3", "8B"}, "llama3-8b"},           {{"llama3", "70B"}, "llama3-70b"},
      {{"llama3", "405B"}, "llama3-405b"},       {{"llama2", "7B"}, "llama2-7b"},
      {{"llama2", "13B"}, "llama2-13b"},         {{"llama2", "70B"}, "llama2-70b"},
      {{"deepseek_v3", "671B"}, "deepseek-v3"},  {{"qwen3", "30B-A3B"}, "qwen3-30b-a3b"},
      {{"qwen3", "235B-A22B"}, "qwen3-235b-a22b"}, {{"llama4", "17bx16e"}, "llama4-scout"},
      {{"llama4", "17bx128e"}, "llama4-maverick"}};
  auto it = kPresets.find({name, flavor});
  if (it == kPresets.end()) {
    std::string known;
    for (const auto& [k, v] : kPresets) known += format("{}{}/{}", known.empty() ? "" : ", ", k.first, k.second);
    throw ScenarioError(format("{}: [model] name = \"{}\", flavor = \"{}\": no clustersim preset for this model (known: {}); "
                               "import its Hugging Face config.json with `clustersim import hf` and use it as model:",
                               j.opt.source, name, flavor, known));
  }
  j.out.set("model", it->second, format("[model] name = \"{}\", flavor = \"{}\"", name, flavor));
}

struct Degrees {
  long long tp = 1, pp = 1, cp = 1, replicate = 1, shard = -1, ep = 1, gpus = 0;
};

Degrees import_cluster(const Job& j) {
  Degrees d;
  const bool old = !j.t["parallelism"] && j.t["training"]["tensor_parallel_degree"];  // torchtitan before 2025
  const std::string_view sec = old ? "training" : "parallelism";
  d.tp = j.integer(sec, "tensor_parallel_degree", 1);
  d.pp = j.integer(old ? "experimental" : "parallelism", "pipeline_parallel_degree", 1);
  d.cp = j.integer(old ? "experimental" : "parallelism", "context_parallel_degree", 1);
  d.replicate = j.integer(sec, "data_parallel_replicate_degree", 1);
  d.shard = j.integer(sec, "data_parallel_shard_degree", old ? j.integer(sec, "data_parallel_degree", -1) : -1);
  d.ep = j.integer(sec, "expert_parallel_degree", 1);
  if (j.opt.gpus > 0) {
    d.gpus = j.opt.gpus;
    j.out.set("cluster.gpus", format("{}", d.gpus), "--gpus on the import command line");
  } else if (d.shard > 0) {
    d.gpus = d.replicate * d.shard * d.tp * d.pp * d.cp;
    j.out.set("cluster.gpus", format("{}", d.gpus), "the product of the parallel degrees");
  } else {
    throw ScenarioError(format("{}: data_parallel_shard_degree = -1 takes every GPU left, and a job file does not say how "
                               "many GPUs there are; give them with `clustersim import torchtitan --gpus N`", j.opt.source));
  }
  const long long model_ranks = d.replicate * d.tp * d.pp * d.cp;
  if (d.gpus % model_ranks != 0)
    throw ScenarioError(format("{}: {} GPUs are not a multiple of replicate x tp x pp x cp = {}", j.opt.source, d.gpus, model_ranks));
  if (d.shard <= 0) d.shard = d.gpus / model_ranks;
  return d;
}

void import_pipeline(const Job& j, const Degrees& d);

void import_parallelism(const Job& j, const Degrees& d) {
  j.out.set("parallelism.tp", format("{}", d.tp), j.origin_or("parallelism", "tensor_parallel_degree", "torchtitan default: 1"));
  j.out.set("parallelism.pp", format("{}", d.pp), j.origin_or("parallelism", "pipeline_parallel_degree", "torchtitan default: 1"));
  j.out.set("parallelism.cp", format("{}", d.cp), j.origin_or("parallelism", "context_parallel_degree", "torchtitan default: 1"));
  if (d.ep > 1) j.out.set("parallelism.ep", format("{}", d.ep), j.origin("parallelism", "expert_parallel_degree"));
  if (d.tp > 1) j.out.set("parallelism.sequence_parallel", "true", "torchtitan's tensor parallelism shards norms by sequence");
  const bool fsdp = d.shard > 1;
  j.out.set("parallelism.zero_stage", fsdp ? "3" : "0", fsdp ? "FSDP2 over the data_parallel_shard ranks" : "DDP (no sharded data parallelism)");
  if (fsdp && d.replicate > 1) j.out.warn(format("HSDP ({} replicas of {}-way FSDP) modelled as FSDP over all {} data-parallel ranks",
                                                 d.replicate, d.shard, d.replicate * d.shard));
  if (auto r = j.get<std::string>("parallelism", "fsdp_reshard_after_forward"); r && fsdp)
    j.out.set("parallelism.fsdp_reshard_after_forward", *r == "default" ? "auto" : *r, j.origin("parallelism", "fsdp_reshard_after_forward"));
  const bool async_tp = j.get<bool>("parallelism", "enable_async_tensor_parallel").value_or(false);
  if (d.tp > 1) j.out.set("parallelism.tp_comm_overlap", async_tp ? "true" : "false",
                          j.origin_or("parallelism", "enable_async_tensor_parallel", "torchtitan default: no async TP"));
  if (d.pp > 1) import_pipeline(j, d);
}

// torchtitan's pipeline split (torchtitan/distributed/pipeline_parallel.py): virtual stages from
// pipeline_parallel_layers_per_stage (ceil((layers + first + last weights) / that)), else one per
// rank (1F1B, GPipe) or two (looped schedules); the embedding and the output count as
// pipeline_parallel_first/last_stage_less_layers layers (default 1 each) and the effective layers
// are dealt out evenly, the first stages one more when they do not divide. Virtual stage i runs on
// rank i % pp (loop style), so stage i is entry i of pp_layers in model order.
void import_pipeline(const Job& j, const Degrees& d) {
  const std::string sched = j.get<std::string>("parallelism", "pipeline_parallel_schedule").value_or("1F1B");
  const std::string so = j.origin_or("parallelism", "pipeline_parallel_schedule", "torchtitan default: 1F1B");
  const bool looped = sched != "1F1B" && sched != "GPipe";
  const long long layers = model_preset(j.out.find("model")->value).layers;
  const long long in_w = j.integer("parallelism", "pipeline_parallel_first_stage_less_layers", 1);
  const long long out_w = j.integer("parallelism", "pipeline_parallel_last_stage_less_layers", 1);
  const long long effective = layers + in_w + out_w;
  long long stages = d.pp * (looped ? 2 : 1);
  std::string stages_origin = looped ? "two stages per rank, torchtitan's default for looped schedules" : "";
  if (auto per = j.get<long long>("parallelism", "pipeline_parallel_layers_per_stage")) {
    if (*per < 1) throw ScenarioError(format("{}: pipeline_parallel_layers_per_stage = {}: must be at least 1", j.opt.source, *per));
    stages = (effective + *per - 1) / *per;
    if (stages % d.pp != 0 || (looped ? stages / d.pp < 2 : stages != d.pp))
      throw ScenarioError(format("{}: pipeline_parallel_layers_per_stage = {} gives {} stages for {} ranks and schedule {}", j.opt.source,
                                 *per, stages, d.pp, sched));
    stages_origin = j.origin("parallelism", "pipeline_parallel_layers_per_stage") + format(" ({} + {} + {} layers)", layers, in_w, out_w);
  }
  if (!looped) {
    j.out.set("parallelism.schedule", sched == "1F1B" ? "1f1b" : "gpipe", so);
  } else {
    j.out.set("parallelism.schedule", "interleaved", so);
    j.out.set("parallelism.vpp", format("{}", stages / d.pp), stages_origin);
    if (sched != "Interleaved1F1B") j.out.warn(format("pipeline schedule {}: modelled as interleaved 1F1B", sched));
    j.out.set("parallelism.pp_comm_overlap", "true",
              "the looped schedule's stage sends are issued ahead and waited when needed (the loader's default for interleaving)");
  }
  const long long per = effective / stages, extra = effective % stages;
  std::vector<long long> split(static_cast<std::size_t>(stages));
  for (long long i = 0; i < stages; ++i) split[std::size_t(i)] = per + (i < extra ? 1 : 0);
  split.front() -= in_w;
  split.back() -= out_w;
  for (long long n : split)
    if (n < 1) throw ScenarioError(format("{}: the pipeline split leaves a stage without layers ({} layers over {} stages)", j.opt.source, layers, stages));
  j.out.set("parallelism.pp_layers", format("[{}]", fmt::join(split, ", ")), "torchtitan's split: embedding and output weighted as layers");
}

void import_recompute(const Job& j) {
  const std::string mode = j.get<std::string>("activation_checkpoint", "mode").value_or("selective");
  const std::string option = j.get<std::string>("activation_checkpoint", "selective_ac_option").value_or("2");
  const std::string mo = j.origin_or("activation_checkpoint", "mode", "torchtitan default: selective");
  if (mode == "none" || mode == "full") {
    j.out.set("training.recompute", mode, mo);
  } else if (option == "op") {
    j.out.set("training.recompute", "selective", mo + ", selective_ac_option = \"op\"");
    j.out.warn("selective_ac_option = \"op\" (torchtitan keeps matmul and attention outputs, recomputing every other "
               "matmul and the element-wise ops): modelled as Megatron-style selective recompute of the attention core");
  } else {
    // A digit N: every N-th block of the rank's model is wrapped in full activation checkpointing
    // (torchtitan apply_ac: a running block count, checkpointed when count % N == 0; 0 or 1:
    // every block). Costed per block, only their number per chunk matters: floor(layers / N).
    j.out.set("training.recompute", "full", mo + format(", selective_ac_option = \"{}\"", option));
    const bool digits = !option.empty() && option.find_first_not_of("0123456789") == std::string::npos;
    if (!digits)
      throw ScenarioError(format("{}: [activation_checkpoint] selective_ac_option = \"{}\": allowed: \"op\" or a whole number",
                                 j.opt.source, option));
    const long long every = std::stoll(option);
    const long long chunk = most_chunk_layers(j.out, model_preset(j.out.find("model")->value).layers);
    if (every > 1) {
      j.out.set("training.recompute_layers", format("{}", chunk / every),
                format("selective_ac_option = \"{}\": every {}-th block, {} of a chunk's {} layers", option, every, chunk / every, chunk));
      if (j.out.find("parallelism.pp_layers"))
        j.out.warn(format("selective_ac_option = \"{}\" under pipelining: modelled as {} recomputed blocks in every model chunk "
                          "(the count of the largest chunk)", option, chunk / every));
    }
  }
}

void import_training(const Job& j, const Degrees& d) {
  const long long local = j.get<long long>("training", "local_batch_size").value_or(j.integer("training", "batch_size", 8));
  const std::string lo = j.t["training"]["local_batch_size"] ? j.origin("training", "local_batch_size")
                                                             : j.origin_or("training", "batch_size", "torchtitan default: 8");
  const long long seq = j.integer("training", "seq_len", 2048);
  j.out.set("training.seq_len", format("{}", seq), j.origin_or("training", "seq_len", "torchtitan default: 2048"));
  const long long dp = d.replicate * d.shard;
  const long long global = std::max(j.integer("training", "global_batch_size", -1), local * dp);
  j.out.set("training.global_batch", format("{}", global), j.t["training"]["global_batch_size"] ? j.origin("training", "global_batch_size")
                                                                                               : lo + " x data-parallel size");
  if (d.pp > 1 && j.t["parallelism"]["pipeline_parallel_microbatches"]) {  // torchtitan before mid-2025
    const long long n = j.integer("parallelism", "pipeline_parallel_microbatches", d.pp);
    if (n < 1 || local % n != 0)
      throw ScenarioError(format("{}: pipeline_parallel_microbatches = {} does not divide the local batch {}", j.opt.source, n, local));
    j.out.set("training.micro_batch", format("{}", local / n), lo + " / " + j.origin("parallelism", "pipeline_parallel_microbatches"));
  } else if (d.pp > 1) {
    const long long mb = j.integer("parallelism", "pipeline_parallel_microbatch_size", 1);
    j.out.set("training.micro_batch", format("{}", mb), j.origin_or("parallelism", "pipeline_parallel_microbatch_size", "torchtitan default: 1"));
  } else {
    j.out.set("training.micro_batch", format("{}", local), lo);
  }
  import_torchtitan_precision(j.t, j.opt.source, j.out);
  import_recompute(j);
  const bool compiled = j.get<bool>("compile", "enable").value_or(j.get<bool>("training", "compile").value_or(false));
  j.out.set("training.fused_elementwise", compiled ? "true" : "false",
            compiled ? "torch.compile fuses element-wise ops" : "torchtitan default: not compiled (eager element-wise kernels)");
  j.out.set("training.attention_impl", "flash2", "PyTorch SDPA's flash backend (FlashAttention-2), torchtitan's default");
  j.out.set("training.overlap_grad_reduce", "true", "FSDP2 / DDP overlap gradient reduction with the backward");
  if (auto steps = j.get<long long>("training", "steps"))
    j.out.set("training.tokens", yaml_number(static_cast<double>(*steps) * global * seq), j.origin("training", "steps") + " x global batch x seq_len");
}

}  // namespace

Imported import_torchtitan(const std::string& text, const ImportOptions& opt) {
  toml::table table;
  try {
    table = toml::parse(text, opt.source);
  } catch (const toml::parse_error& e) {
    throw ScenarioError(format("{}:{}:{}: {}", opt.source, e.source().begin.line, e.source().begin.column, e.description()));
  }
  Imported out;
  out.name = format("{} (imported from torchtitan)", opt.source);
  const Job j{table, opt, out};
  import_model(j);
  out.set("hardware", opt.hardware.empty() ? "h100-sxm" : opt.hardware,
          opt.hardware.empty() ? "assumed: a job file does not name the GPU (clustersim import --hardware)" : "--hardware on the import command line");
  if (opt.hardware.empty()) out.warn("hardware not given: assumed h100-sxm (pass --hardware NAME or a profile file)");
  const Degrees d = import_cluster(j);
  import_parallelism(j, d);
  import_training(j, d);
  warn_unmodelled_torchtitan_keys(table, opt.source, out);
  return out;
}

}  // namespace clustersim::scenarios::importers
