#pragma once
// The docstrings of the Python module's functions (help(clustersim.plan), …), one place for each:
// docs/python_reference.md is generated from them (tools/python/gen_reference.py), and the defaults
// they state are read from the code that applies them (the schedules plan and sweep search).
#include <fmt/format.h>

#include <string>

#include "studies/plan_search.hpp"
#include "studies/sweep_space.hpp"

namespace clustersim::python::doc {

inline std::string joined(const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, ", ")); }

inline const char* run() {
  return "Simulate one training step of a scenario; returns the dict `clustersim run --json` prints.\n\n"
         "scenario: a path (str or os.PathLike) to a scenario YAML, or the scenario as a dict.\n"
         "set: dict of dotted keys to values, as --set (None unsets a key, as --set key=null).\n"
         "explain: also compute the MFU waterfall, roofline and advice, under the key \"explain\".\n"
         "strict: raise clustersim.Error when the scenario does not fit in memory (the CLI's exit code 3);\n"
         "by default the result says so in fits_in_memory.\n"
         "Raises clustersim.Error (a ValueError; ScenarioError is the same class) with the CLI's one-line\n"
         "message on bad input.";
}

inline const std::string& sweep() {
  static const std::string s = fmt::format(
      "Evaluate every configuration of the vary axes and/or the automatic parallel grid; returns one dict per\n"
      "configuration with the columns of `clustersim sweep --csv` (a pandas DataFrame with as_frame=True).\n\n"
      "base: a scenario path or dict. vary: dict of dotted key -> list of values or range text ('64..1024',\n"
      "'1..8:x2'), as --vary. auto_parallel: search tp, pp, cp, vpp, ZeRO, micro-batch and recompute, as\n"
      "--auto-parallel. set: fixed overrides, as --set. threads: worker threads (0: one per core).\n"
      "schedules: pipeline schedules searched where pp > 1, '1f1b,zb-h1' or a list, as --schedules;\n"
      "None searches {}.",
      joined(studies::PlanGrid{}.schedules));
  return s;
}

inline const char* explain() {
  return "Where the MFU went for one scenario: the `explain` object of `clustersim run --explain --json`.\n\n"
         "scenario, set: as for run(). The dict holds \"waterfall\" (one entry per cause: cause, mfu_points,\n"
         "seconds; from 100 % of peak down to the achieved MFU), \"method\" (how each cause's share was\n"
         "measured: a cumulative re-simulation with the causes removed in turn), \"ops\" (the roofline: each\n"
         "kernel's kind, bound, time per step, share, FLOP/byte and achieved rate), \"ridge_flop_per_byte\"\n"
         "and \"advice\" (knobs re-simulated; only improvements are listed).";
}

inline const char* validate() {
  return "Predict published training runs; returns the dict `clustersim validate --json [--group-by COLUMN]`\n"
         "prints (rows with predicted and measured values, headline MAPE, bias).\n\n"
         "csv: another published-runs CSV (default: the compiled-in data/validation/published.csv).\n"
         "source: only rows whose id starts with it. group_by: a CSV column; adds \"groups\" with each value's\n"
         "bias, MAPE, median and worst row, in sample and held out.";
}

inline const std::string& plan() {
  static const std::string s = fmt::format(
      "Find the cluster size and parallel plan that train `model` on `tokens` within `days`; returns the dict\n"
      "`clustersim plan --json` prints (the cheapest plans meeting the deadline and the fastest per GPU count,\n"
      "each with its error band).\n\n"
      "model: a model preset or YAML path. tokens: a number or text ('15e12', '15T'). days: the deadline.\n"
      "hardware: a profile name, 'h100-sxm,b200' or a list. seq_len; global_batch in sequences (None: 4 Mi\n"
      "tokens / seq_len); max_gpus (None: 8x the 100 %-MFU bound); gpu_step (None: GPUs per node). batch_tokens:\n"
      "a range such as '4M..16M' searched instead of one global batch. fix: dict of keys held fixed, as --fix.\n"
      "cost_per_gpu_hour: a number, 'h100-sxm=2.5,gb200=6' or a dict. pue, price_per_kwh,\n"
      "node_overhead_w, node_overhead_fraction: energy cost inputs (< 0 or None: the CLI's defaults).\n"
      "by: rank by 'cost', 'days' or 'gpus'. top: rows kept. max_vpp: the largest virtual pipeline size\n"
      "searched. confidence: > 0 requires the deadline at the pessimistic end of the error band at that\n"
      "confidence (e.g. 0.9), as --confidence.\n"
      "schedules: pipeline schedules searched where pp > 1, '1f1b,zb-h1' or a list, as --schedules;\n"
      "None searches {} (zb-h1 is opt-in: about 1.5x the search time). threads: 0 for one per core.\n"
      "strict: raise clustersim.Error when no plan meets the deadline (the CLI's exit code 3); by default the\n"
      "result's fits is False.",
      joined(studies::kPlanDefaultSchedules));
  return s;
}

}  // namespace clustersim::python::doc
