// The keys of a torchtitan job file (torchtitan/config/job_config.py) the importer reads, those that do
// not change a step (data, optimizer, logging, checkpoint paths), and those it leaves at torchtitan's
// default: any other key, or a key of the last kind set to another value, is warned with its line, so
// that a new upstream setting shows up instead of being silently dropped.
#include <fmt/format.h>

#include <toml++/toml.h>

#include <map>
#include <optional>
#include <set>

#include "scenarios/import/torchtitan_toml.hpp"

namespace clustersim::scenarios::importers {
namespace {

using fmt::format;

// Per section: key -> nullopt when read or irrelevant, else the only value modelled (torchtitan's default).
using Keys = std::map<std::string, std::optional<std::string>>;

const std::map<std::string, Keys>& known_keys() {
  static const std::optional<std::string> any;
  static const std::map<std::string, Keys> k = {
      {"model", {{"name", any}, {"flavor", any}, {"converters", any}, {"hf_assets_path", any}, {"tokenizer_path", any},
                 {"print_after_conversion", any}}},
      {"training", {{"local_batch_size", any}, {"batch_size", any}, {"global_batch_size", any}, {"seq_len", any}, {"steps", any},
                    {"mixed_precision_param", any}, {"mixed_precision_reduce", any}, {"compile", any}, {"enable_float8_linear", any},
                    {"tensor_parallel_degree", any}, {"data_parallel_degree", any}, {"data_parallel_shard_degree", any},
                    {"data_parallel_replicate_degree", any}, {"dataset", any}, {"dataset_path", any}, {"max_norm", any},
                    {"gc_freq", any}, {"gc_debug", any}, {"dataloader", any}, {"warmup_steps", any}, {"seed", any},
                    {"deterministic", "false"}, {"enable_cpu_offload", "false"}, {"dtype", "\"float32\""}}},
      {"parallelism", {{"data_parallel_replicate_degree", any}, {"data_parallel_shard_degree", any}, {"fsdp_reshard_after_forward", any},
                       {"tensor_parallel_degree", any}, {"enable_async_tensor_parallel", any}, {"pipeline_parallel_degree", any},
                       {"pipeline_parallel_first_stage_less_layers", any}, {"pipeline_parallel_last_stage_less_layers", any},
                       {"pipeline_parallel_layers_per_stage", any}, {"pipeline_parallel_schedule", any},
                       {"pipeline_parallel_microbatch_size", any}, {"pipeline_parallel_microbatches", any},
                       {"context_parallel_degree", any}, {"expert_parallel_degree", any}, {"expert_tensor_parallel_degree", "1"},
                       {"disable_loss_parallel", "false"}, {"context_parallel_rotate_method", "\"allgather\""},
                       {"context_parallel_load_balancer", "\"headtail\""}, {"expert_parallel_comm_backend", "\"standard\""},
                       {"pipeline_parallel_expert_parallel_overlap", "true"}, {"pipeline_parallel_schedule_csv", "\"\""}}},
      {"activation_checkpoint", {{"mode", any}, {"selective_ac_option", any}, {"preserve_rng_state", any}, {"determinism_check", any},
                                 {"debug", any}, {"early_stop", "false"}}},
      {"compile", {{"enable", any}, {"components", any}, {"backend", "\"inductor\""}}},
      {"float8", {{"enable_float8_linear", any}, {"recipe_name", any}, {"filter_fqns", any}, {"enable_fsdp_float8_all_gather", "false"},
                  {"precompute_float8_dynamic_scale_for_fsdp", "false"}, {"emulate", "false"}, {"force_recompute_fp8_weight_in_bwd", "false"}}},
      {"mx", {{"recipe_name", any}, {"filter_fqns", any}, {"mxfp8_dim1_cast_kernel_choice", "\"triton\""}}},
      {"quantize.linear.float8", {{"recipe_name", any}, {"filter_fqns", any}, {"enable_fsdp_float8_all_gather", "false"},
                                  {"precompute_float8_dynamic_scale_for_fsdp", "false"}, {"emulate", "false"}}},
      {"quantize.linear.mx", {{"recipe_name", any}, {"filter_fqns", any}, {"mxfp8_dim1_cast_kernel_choice", "\"triton\""}}},
      {"quantize.grouped_mm.float8", {{"fqns", any}}},
      {"quantize.grouped_mm.mx", {{"fqns", any}, {"recipe_name", "\"mxfp8\""}}}};
  return k;
}

// Sections that do not change a step's speed or memory.
const std::set<std::string>& quiet_sections() {
  static const std::set<std::string> s = {"job", "profiling", "metrics", "optimizer", "lr_scheduler", "checkpoint", "validation",
                                          "comm", "memory_estimation", "debug", "experimental"};
  return s;
}

void check_section(const toml::table& sec, const std::string& name, const std::string& src, Imported& out) {
  auto known = known_keys().find(name);
  if (known == known_keys().end()) {
    out.warn(format("{}:{}: [{}]: a section the importer does not model, ignored", src, sec.source().begin.line, name));
    return;
  }
  for (const auto& [key, node] : sec) {
    const std::string k(key.str());
    auto it = known->second.find(k);
    const bool unknown = it == known->second.end();
    if (!unknown && (!it->second || *it->second == toml_shown(node))) continue;
    out.warn(format("{}:{}: [{}] {} = {}: not modelled{}, ignored", src, node.source().begin.line, name, k, toml_shown(node),
                    unknown ? "" : format(" (only {} is)", *it->second)));
  }
}

}  // namespace

std::string toml_shown(const toml::node& n) {
  if (auto s = n.value<std::string>()) return '"' + *s + '"';
  if (n.is_boolean()) return n.value<bool>().value_or(false) ? "true" : "false";
  if (auto i = n.value<long long>()) return std::to_string(*i);
  if (auto d = n.value<double>()) return yaml_number(*d);
  if (const auto* a = n.as_array()) {
    std::string s;
    for (const auto& e : *a) s += (s.empty() ? "" : ", ") + toml_shown(e);
    return "[" + s + "]";
  }
  return "{…}";
}

void warn_unmodelled_torchtitan_keys(const toml::table& t, const std::string& src, Imported& out) {
  for (const auto& [key, node] : t) {
    const std::string name(key.str());
    const auto* sec = node.as_table();
    if (quiet_sections().count(name) || !sec) continue;
    if (name != "quantize") {
      check_section(*sec, name, src, out);
      continue;
    }
    for (const auto& [kind, n1] : *sec)      // quantize.linear, quantize.grouped_mm (quantize.dense / .moe before)
      if (const auto* s1 = n1.as_table())
        for (const auto& [fmt_name, n2] : *s1)  // float8, mx
          if (const auto* s2 = n2.as_table()) {
            std::string full = format("quantize.{}.{}", kind.str(), fmt_name.str());
            if (full.rfind("quantize.dense.", 0) == 0) full = "quantize.linear." + std::string(fmt_name.str());
            if (full.rfind("quantize.moe.", 0) == 0) full = "quantize.grouped_mm." + std::string(fmt_name.str());
            check_section(*s2, full, src, out);
          }
  }
}

}  // namespace clustersim::scenarios::importers
