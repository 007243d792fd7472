#include "tools/mfu_command.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <vector>

#include "models/flops.hpp"
#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "studies/counted.hpp"
#include "studies/json_value.hpp"

namespace clustersim::tools {

CLI::App* add_mfu_command(CLI::App& app, MfuOptions& o) {
  auto* c = app.add_subcommand("mfu", "MFU/HFU from a training log's throughput or step time");
  auto* tps = c->add_option("--tokens-per-s", o.tokens_per_s, "measured tokens/s (cluster total unless --per-gpu)");
  c->add_flag("--per-gpu", o.per_gpu, "--tokens-per-s is per GPU");
  auto* st = c->add_option("--step-time", o.step_time_s, "measured seconds per optimizer step");
  c->add_option("--global-batch", o.global_batch, "sequences per step (with --step-time)");
  c->add_option("--seq-len", o.seq_len, "tokens per sequence");
  auto* model = c->add_option("--model", o.model, "model preset name or model YAML file");
  auto* fpt = c->add_option("--flops-per-token", o.flops_per_token, "model FLOPs per token, instead of --model");
  c->add_option("--gpu", o.gpu, "hardware profile (default h100-sxm)");
  c->add_option("--gpus", o.gpus, "number of GPUs")->required();
  c->add_option("--precision", o.precision, "peak used as denominator: fp32|tf32|bf16|fp16|fp8");
  c->add_option("--recompute", o.recompute, "none|selective|full: also report HFU");
  c->add_option("--peak", o.peak_flops, "override the dense peak FLOP/s per GPU");
  c->add_flag("--json", o.json, "print one JSON object");
  tps->excludes(st);
  model->excludes(fpt);
  return c;
}

int run_mfu_command(const MfuOptions& o) {
  using scenarios::ScenarioError;
  if (o.gpus <= 0) throw ScenarioError("mfu: --gpus must be a positive integer");
  // 0 is "not given" (the options' default); a negative or NaN value is a typo, named as such.
  if (!(o.tokens_per_s >= 0))
    throw ScenarioError(fmt::format("mfu: --tokens-per-s {}: expected a positive number of tokens per second", o.tokens_per_s));
  if (!(o.step_time_s >= 0))
    throw ScenarioError(fmt::format("mfu: --step-time {}: expected a positive number of seconds", o.step_time_s));
  if (o.global_batch < 0 || o.seq_len < 0)
    throw ScenarioError(fmt::format("mfu: --{} {}: expected a positive whole number", o.global_batch < 0 ? "global-batch" : "seq-len",
                                    o.global_batch < 0 ? o.global_batch : o.seq_len));
  double tokens_per_s = 0;
  if (o.tokens_per_s > 0) {
    tokens_per_s = o.per_gpu ? o.tokens_per_s * o.gpus : o.tokens_per_s;
  } else if (o.step_time_s > 0) {
    if (o.global_batch <= 0 || o.seq_len <= 0)
      throw ScenarioError(
          fmt::format("mfu: --step-time needs --global-batch N and --seq-len N, both above 0 (here "
                      "--global-batch {}, --seq-len {})",
                      o.global_batch, o.seq_len));
    tokens_per_s = double(o.global_batch) * o.seq_len / o.step_time_s;
  } else {
    throw ScenarioError("mfu: give --tokens-per-s N (with --per-gpu if per GPU) or --step-time S");
  }
  if (o.model.empty() && o.flops_per_token <= 0)
    throw ScenarioError("mfu: give --model PRESET|FILE (with --seq-len) or --flops-per-token F");
  if (!o.model.empty() && o.seq_len <= 0)
    throw ScenarioError("mfu: --model needs --seq-len for the attention FLOPs");
  // Resolve the hardware (and model) through the scenario loader so presets and errors match.
  const int seq = o.seq_len > 0 ? o.seq_len : 2048;
  // A model file is read as the loader reads `model: FILE` in a scenario.
  scenarios::ScenarioPatch scenario;
  scenario.set("model", o.model.empty() ? std::string("llama2-7b") : o.model).set("hardware", o.gpu);
  scenario.set("cluster.gpus", 1).set("training.seq_len", seq).set("training.global_batch", 1);
  scenario.set("training.precision", o.precision);
  if (!o.recompute.empty()) scenario.set("training.recompute", o.recompute);
  const auto sc = scenarios::load_scenario(scenario, "clustersim mfu");
  const double peak = o.peak_flops > 0 ? o.peak_flops : sc.gpu.peak(sc.training.precision).si();
  const double per_gpu = tokens_per_s / o.gpus;

  struct Definition {
    std::string name;
    double flops_per_token;
    double hardware_flops_per_token;
  };
  std::vector<Definition> defs;
  if (o.model.empty()) {
    defs.push_back({"given --flops-per-token", o.flops_per_token, o.flops_per_token});
  } else {
    auto t = sc.training;
    for (auto f : {models::FlopsFormula::palm, models::FlopsFormula::megatron}) {
      t.flops_formula = f;
      const auto fl = models::flops_per_token(sc.model, t);
      defs.push_back({fl.formula, fl.model, fl.hardware});
    }
  }
  std::vector<std::string> warnings;
  const double mfu0 = defs.front().flops_per_token * per_gpu / peak;
  if (mfu0 > 1.0)
    warnings.push_back(o.per_gpu ? "MFU above 100% is impossible: the throughput looks like the cluster total; drop --per-gpu"
                                 : "MFU above 100% is impossible: the throughput looks per GPU; add --per-gpu");
  else if (mfu0 > 0.75)
    warnings.push_back("MFU above 75% is implausibly high for real training: check per-GPU vs cluster throughput and "
                       "that the peak is the dense (not 2:4 sparse) figure");
  else if (mfu0 < 0.02 && !o.per_gpu && o.tokens_per_s > 0)
    warnings.push_back("MFU below 2% is implausibly low: if the throughput is per GPU, add --per-gpu");
  const double dense = sc.gpu.peak(sc.training.precision).si();
  if (o.peak_flops > 0 && std::abs(o.peak_flops - 2 * dense) < 0.02 * dense)
    warnings.push_back(fmt::format("--peak {:.4g} is the 2:4 sparse figure; the dense peak is {:.4g} FLOP/s", o.peak_flops, dense));
  const double bf16 = sc.gpu.peak(hardware::Precision::bf16).si();
  if (sc.training.precision == hardware::Precision::fp8)
    warnings.push_back(fmt::format("FP8 denominator: against the BF16 peak ({:.4g}) the MFU would be {:.1f}% — sources differ "
                                   "(torchtitan uses BF16 for Float8 runs, NVIDIA recipes FP8)",
                                   bf16, 100 * defs.front().flops_per_token * per_gpu / bf16));

  if (o.json) {
    studies::Json definitions = studies::Json::array();
    for (const auto& d : defs) {
      studies::Json one = {{"formula", d.name},
                           {"flops_per_token", studies::json_number_value(d.flops_per_token)},
                           {"mfu", studies::json_number_value(d.flops_per_token * per_gpu / peak)}};
      if (!o.recompute.empty()) one["hfu"] = studies::json_number_value(d.hardware_flops_per_token * per_gpu / peak);
      definitions.push_back(std::move(one));
    }
    const studies::Json out = {
        {"tokens_per_s", studies::json_number_value(tokens_per_s)},
        {"tokens_per_s_per_gpu", studies::json_number_value(per_gpu)},
        {"peak_flops_per_gpu", studies::json_number_value(peak)},
        {"tflops_per_gpu", studies::json_number_value(defs.back().flops_per_token * per_gpu / 1e12)},
        {"mfu", studies::json_number_value(defs.back().flops_per_token * per_gpu / peak)},
        {"definitions", definitions},
        {"warnings", warnings}};
    fmt::print("{}\n", studies::json_dump(out));
  } else {
    fmt::print("throughput      {:.6g} tokens/s total, {:.6g} per GPU on {}\n", tokens_per_s, per_gpu,
               studies::counted(o.gpus, "GPU"));
    fmt::print("denominator     {:.4g} TFLOP/s per GPU ({} {}, dense)\n", peak / 1e12, sc.gpu.name, o.precision);
    for (const auto& d : defs) {
      fmt::print("MFU {:5.1f} %     {:.1f} TFLOP/s per GPU, {:.4g} FLOP/token  [{}]\n", 100 * d.flops_per_token * per_gpu / peak,
                 d.flops_per_token * per_gpu / 1e12, d.flops_per_token, d.name);
      if (!o.recompute.empty())
        fmt::print("HFU {:5.1f} %     with recompute {}\n", 100 * d.hardware_flops_per_token * per_gpu / peak, o.recompute);
    }
    for (const auto& w : warnings) fmt::print("warning: {}\n", w);
  }
  return 0;
}

}  // namespace clustersim::tools
