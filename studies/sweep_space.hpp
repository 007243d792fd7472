#pragma once
// The configurations of a sweep: the cartesian product of --vary axes over scenario keys,
// optionally times every parallelism plan for the GPU count (--auto-parallel), addressed by
// index so that 10⁸-point sweeps never materialize and shards are plain index sets.
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/training_spec.hpp"
#include "scenarios/scenario_patch.hpp"

namespace clustersim::models {
struct ModelSpec;
}
namespace clustersim::scenarios {
class ScenarioTemplate;
}

namespace clustersim::studies {

/// One swept scenario key and its values, in the order given.
struct Axis {
  std::string key;
  std::vector<std::string> values;
};

/// Values of a --vary: "v1,v2,..." (any scalars), "a..b" (a, 2a, 4a, ... ≤ b: powers of two
/// from 1 when a = 1), "a..b:xF" (geometric, factor F), "a..b:+S" (arithmetic, step S).
/// Throws ScenarioError naming the --vary on a malformed list or range.
std::vector<std::string> parse_values(const std::string& text, const std::string& what);
/// "key=values" as above.
Axis parse_axis(const std::string& spec);

/// The plan dimensions --auto-parallel enumerates (scenario keys under parallelism/training).
struct PlanGrid {
  std::vector<int> tp{1, 2, 4, 8};
  std::vector<int> pp{1, 2, 4, 8, 16, 32, 64};
  std::vector<int> cp{1, 2, 4, 8};
  std::vector<int> vpp{1, 2, 4};  ///< used as is when layers is 0 or vpp is fixed
  /// Pipeline schedules searched where they apply (pp > 1; docs/sweeps.md): 1f1b, gpipe and zb-h1
  /// at vpp 1 (zb-h1 runs one model chunk per stage, models::check_schedule), interleaved at every
  /// vpp > 1, dualpipev and zbv at vpp 2 (two chunks per rank in a V). A pp 1 plan has no
  /// pipeline and runs 1f1b whatever the list says. Default: 1f1b, zb-h1, interleaved, dualpipev,
  /// zbv (gpipe holds every micro-batch's activations for 1F1B's bubble, so it is only searched
  /// when asked for).
  std::vector<std::string> schedules{"1f1b", "zb-h1", "interleaved", "dualpipev", "zbv"};
  std::vector<int> micro_batch{1, 2, 4, 8};
  std::vector<int> zero_stage{0, 1, 2, 3};
  std::vector<std::string> recompute{"none", "selective", "full"};
  /// The scenario lists training.recompute_modules, which apply to recompute: selective only:
  /// the none and full plans drop them (sweep_space_for sets it; the sweep says so).
  bool drop_recompute_modules = false;
  /// MoE models (experts > 0) also search expert parallelism. An empty list means derived per
  /// plan: ep over the powers of two that divide the routed experts (and the experts
  /// themselves), etp over {1, tp} (Megatron's default etp = tp, and the common etp = 1); both
  /// subject to etp·ep dividing tp·cp·dp and etp the expert width. At most ~2·log2(experts)
  /// expert layouts per dense plan.
  int experts = 0;
  int expert_ffn_hidden = 0;
  std::vector<int> ep, etp;
  /// > 0: the model's layers. Then (unless vpp is fixed) each pp gets vpp_values(layers, pp, max_vpp)
  /// instead of `vpp`.
  int layers = 0;
  int max_vpp = 8;
  bool vpp_fixed = false;  ///< set by fix_plan_dimension
  /// The model every plan is for, when one is (set_model_grid; null when an axis varies the
  /// model or the base does not load). Then the plans the loader refuses for the model alone
  /// (scenarios/plan_rules.hpp: tp against the heads and widths, cp with MLA, pp·vpp above the
  /// layers) are not listed, except in a dimension fixed by the user (fix_plan_dimension), whose
  /// rows keep the loader's reason.
  std::shared_ptr<const models::ModelSpec> model;
  bool tp_fixed = false, pp_fixed = false, cp_fixed = false;  ///< set by fix_plan_dimension
};
/// The virtual-stage counts searched for pp > 1: 1, and every v in 2..max_vpp with pp·v dividing
/// the layers or the layers + 2 (Megatron's split counting the embedding and the loss as one
/// layer each, the shortened first and last stages of Llama 3 405B: 126 + 2 = 16 x 8).
std::vector<int> vpp_values(int layers, int pp, int max_vpp);
/// The schedule names of a --schedules list ("1f1b,zb-h1,interleaved"): each one of
/// kScheduleNames, none twice. Throws ScenarioError naming `what` and the allowed values.
std::vector<std::string> parse_schedules(const std::string& text, const std::string& what);
/// Every name parallelism.schedule takes (scenarios/load.cpp).
inline const std::vector<std::string> kScheduleNames = models::names_in(models::kPipelineScheduleNames);
/// Scenario keys of the plan dimensions, in column order (with parallelism.ep and
/// parallelism.etp last for an MoE grid).
const std::vector<std::string>& plan_keys(bool moe = false);
/// Sets grid->model from the model of `base` (with `sets` applied), and for an MoE model
/// grid->experts / expert_ffn_hidden; unchanged when the base alone does not load.
void set_model_grid(const scenarios::ScenarioTemplate& base, const std::vector<std::string>& sets, PlanGrid* grid);
/// Restricts a grid dimension to one value when `key` is a plan key; false otherwise.
bool fix_plan_dimension(PlanGrid* grid, const std::string& key, const std::string& value);

/// One plan: its typed overrides and its value per plan_keys() column.
struct Plan {
  scenarios::ScenarioPatch overrides;
  std::vector<std::string> values;
};
/// One plan as a grid point (what SweepSpace keeps: hundreds of thousands of them): schedule is an
/// index into kScheduleNames, recompute into the grid's recompute list.
struct PlanPoint {
  int tp = 1, pp = 1, cp = 1, vpp = 1, micro_batch = 1, zero = 0, ep = 1, etp = 1;
  std::uint8_t schedule = 0, recompute = 0;
};
/// The plans of auto_parallel_plans as grid points, in the same order.
std::vector<PlanPoint> auto_parallel_points(int gpus, const PlanGrid& grid);
/// Appends the overrides and column values of `point` (ep and etp when the grid has experts); an
/// entry whose key is in `fixed_keys` takes the origin `fixed`, the others `origin`.
void add_plan(const PlanPoint& point, const PlanGrid& grid, const std::string& origin, const std::string& fixed,
              const std::vector<std::string>& fixed_keys, scenarios::ScenarioPatch* overrides,
              std::vector<std::string>* values);
/// Every grid point with tp·pp·cp dividing `gpus` (dp = gpus / (tp·pp·cp)); vpp > 1 only with
/// pp > 1, each pipelined plan once per schedule of grid.schedules that applies at its vpp; none
/// that grid.model's rules refuse (PlanGrid::model). Plans the loader rejects for other reasons
/// (the batch, the sequence length, the cluster) are still listed: the sweep keeps them with the
/// loader's reason. Order: tp, pp, cp, vpp, schedule, micro_batch, zero, recompute.
std::vector<Plan> auto_parallel_plans(int gpus, const PlanGrid& grid);

/// One configuration: overrides to apply to the base scenario (each naming the flag it came
/// from: SweepSpace::Origins), and its column values.
struct Config {
  std::uint64_t index = 0;
  scenarios::ScenarioPatch overrides;
  std::vector<std::string> values;  ///< one per SweepSpace::columns(); "" when not set
};

/// The whole number `config` sets at `path` (its last override there), read from the typed
/// overrides. Throws std::logic_error when it sets none or another type: callers ask only for keys
/// their space always sets as numbers.
long long config_integer(const Config& config, const std::string& path);

/// `config`'s overrides joined as one key, its ZeRO stage (parallelism.zero_stage) written as
/// `stage_as`, so that configurations differing only in that stage share the key (StepMemo's steps,
/// BoundShare's bounds). Empty when it sets no stage, or a stage outside `twins`.
std::string zero_twin_key(const Config& config, std::initializer_list<const char*> twins, const std::string& stage_as);

class SweepSpace {
 public:
  /// `fixed` ("key=value") apply to every configuration; with auto_parallel a fixed plan key
  /// restricts that dimension instead. `base_gpus` is cluster.gpus of the base scenario, used
  /// when no axis or fixed override sets it. Throws ScenarioError on inconsistent input.
  SweepSpace(std::vector<Axis> axes, bool auto_parallel, std::vector<std::string> fixed, int base_gpus,
             PlanGrid grid = {});

  std::uint64_t size() const { return size_; }
  /// Configuration `index` (< size()). Axes vary last-fastest; plans vary fastest of all.
  Config at(std::uint64_t index) const;
  const std::vector<std::string>& columns() const { return columns_; }
  /// The --auto-parallel grid the plans come from (the default grid when --auto-parallel is off).
  const PlanGrid& grid() const { return grid_; }

  /// The flags a front end's values come from, for error messages: a swept key, a fixed one, a
  /// key of the --auto-parallel grid. `clustersim plan` names them plan, --fix and plan.
  struct Origins {
    std::string axis = "--vary", fixed = "--set", grid = "--auto-parallel";
  };
  void set_origins(Origins origins) { origins_ = std::move(origins); }

 private:
  std::vector<std::size_t> combo_digits(std::uint64_t combo) const;
  int gpus_of(const std::vector<std::size_t>& digits) const;

  std::vector<Axis> axes_;
  bool auto_parallel_;
  scenarios::ScenarioPatch fixed_;
  std::vector<std::vector<scenarios::PatchValue>> axis_values_;  // axes_[i].values, typed
  std::vector<std::string> fixed_keys_;      // every fixed key, also those that restrict the grid
  Origins origins_;
  int base_gpus_;
  std::vector<std::string> columns_;
  std::uint64_t combos_ = 1;
  std::uint64_t size_ = 0;
  int gpus_axis_ = -1;                       // index of the cluster.gpus axis, if any
  PlanGrid grid_;                            // auto_parallel: the recompute names the points index
  std::map<int, std::vector<PlanPoint>> plans_;  // by GPU count
  std::vector<std::uint64_t> first_of_combo_;  // auto_parallel: index of each combo's first plan
};

/// --shard i/n (0 ≤ i < n): configurations i, i+n, i+2n, ... — disjoint, and together complete.
struct Shard {
  std::uint64_t index = 0;
  std::uint64_t count = 1;
  std::uint64_t size(std::uint64_t total) const { return total > index ? (total - index + count - 1) / count : 0; }
  std::uint64_t global(std::uint64_t local) const { return index + local * count; }
};
Shard parse_shard(const std::string& text);

}  // namespace clustersim::studies
