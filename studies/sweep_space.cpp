#include "studies/sweep_space.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include "scenarios/error.hpp"
#include "scenarios/plan_rules.hpp"
#include "scenarios/scenario_template.hpp"

namespace clustersim::studies {
namespace {

using scenarios::ScenarioError;

constexpr std::uint64_t kMaxValuesPerAxis = 1'000'000;
constexpr std::uint64_t kMaxConfigs = std::uint64_t(1) << 62;

std::optional<double> to_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

bool is_whole(double v) { return v == std::floor(v) && std::abs(v) < 9e15; }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) out.push_back(s.substr(start, i - start)), start = i + 1;
  return out;
}

// "a..b", "a..b:xF", "a..b:+S".
std::vector<std::string> expand_range(const std::string& item, const std::string& what) {
  const auto dots = item.find("..");
  const auto colon = item.find(':', dots);
  const std::string lo_text = item.substr(0, dots);
  const std::string hi_text = item.substr(dots + 2, colon == std::string::npos ? std::string::npos : colon - dots - 2);
  const std::string step_text = colon == std::string::npos ? "x2" : item.substr(colon + 1);
  auto bad = [&](const std::string& why) {
    return ScenarioError(fmt::format("{}: range '{}' {}; expected a..b (doubling), a..b:xF or a..b:+S", what, item, why));
  };
  const auto lo = to_number(lo_text), hi = to_number(hi_text);
  if (!lo || !hi) throw bad("has a bound that is not a number");
  if (*lo > *hi) throw bad("is empty (a > b)");
  if (step_text.size() < 2 || (step_text[0] != 'x' && step_text[0] != '+')) throw bad("has a malformed step");
  const bool geometric = step_text[0] == 'x';
  const auto step = to_number(step_text.substr(1));
  if (!step || (geometric ? (*step <= 1 || *lo <= 0) : *step <= 0))
    throw bad(geometric ? "needs a factor above 1 and a > 0" : "needs a step above 0");
  const bool whole = is_whole(*lo) && is_whole(*step);
  std::vector<std::string> out;
  const double tolerance = 1e-9 * std::max(std::abs(*hi), 1.0);
  for (std::uint64_t i = 0;; ++i) {
    // Computed from the index, not accumulated, so that long ranges do not drift.
    const double v = geometric ? *lo * std::pow(*step, double(i)) : *lo + *step * double(i);
    if (v > *hi + tolerance) break;
    if (i >= kMaxValuesPerAxis) throw bad(fmt::format("has more than {} values", kMaxValuesPerAxis));
    out.push_back(whole ? fmt::format("{}", static_cast<long long>(std::llround(v))) : fmt::format("{:.10g}", v));
  }
  return out;
}

}  // namespace

std::vector<std::string> parse_values(const std::string& text, const std::string& what) {
  std::vector<std::string> out;
  for (const std::string& item : split(text, ',')) {
    if (item.empty()) throw ScenarioError(fmt::format("{}: empty value in '{}'", what, text));
    if (item.find("..") != std::string::npos) {
      for (auto& v : expand_range(item, what)) out.push_back(std::move(v));
    } else {
      out.push_back(item);
    }
  }
  return out;
}

Axis parse_axis(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    throw ScenarioError(fmt::format("--vary {}: expected key.path=values, e.g. parallelism.tp=1,2,4,8 or "
                                    "cluster.gpus=256..4096:x2", spec));
  Axis a;
  a.key = spec.substr(0, eq);
  a.values = parse_values(spec.substr(eq + 1), "--vary " + a.key);
  return a;
}

const std::vector<std::string>& plan_keys(bool moe) {
  static const std::vector<std::string> keys = {"parallelism.tp", "parallelism.pp", "parallelism.cp",
                                                "parallelism.vpp", "parallelism.schedule", "training.micro_batch",
                                                "parallelism.zero_stage", "training.recompute"};
  static const std::vector<std::string> moe_keys = [] {
    auto k = keys;
    k.insert(k.end(), {"parallelism.ep", "parallelism.etp"});
    return k;
  }();
  return moe ? moe_keys : keys;
}

void set_model_grid(const scenarios::ScenarioTemplate& base, const std::vector<std::string>& sets, PlanGrid* grid) {
  try {
    const auto sc = base.instantiate(sets);
    grid->model = std::make_shared<const models::ModelSpec>(sc.model);
    if (!sc.model.is_moe()) return;
    grid->experts = sc.model.moe.experts;
    grid->expert_ffn_hidden = sc.model.moe.expert_ffn_hidden;
  } catch (const ScenarioError&) {
    // The base does not load on its own (e.g. its size comes from --vary): MoE keys still
    // pass through --set; the sweep rows report the loader's reason.
  }
}

bool fix_plan_dimension(PlanGrid* grid, const std::string& key, const std::string& value) {
  if (key == "parallelism.ep" || key == "parallelism.etp") {
    const auto v = to_number(value);
    if (!v || !is_whole(*v) || *v < 1 || *v > 1e6)
      throw ScenarioError(fmt::format("{}={}: a plan dimension needs a whole number", key, value));
    (key == "parallelism.ep" ? grid->ep : grid->etp) = {int(*v)};
    return true;
  }
  const auto& keys = plan_keys();
  const auto it = std::find(keys.begin(), keys.end(), key);
  if (it == keys.end()) return false;
  if (key == "training.recompute") {
    grid->recompute = {value};
    return true;
  }
  if (key == "parallelism.schedule") {
    grid->schedules = parse_schedules(value, key + "=" + value);
    return true;
  }
  const auto v = to_number(value);
  if (!v || !is_whole(*v) || *v < 0 || *v > 1e6)
    throw ScenarioError(fmt::format("{}={}: a plan dimension needs a whole number", key, value));
  std::vector<int>* dims[] = {&grid->tp, &grid->pp, &grid->cp, &grid->vpp, nullptr, &grid->micro_batch, &grid->zero_stage};
  *dims[it - keys.begin()] = {int(*v)};
  bool* fixed[] = {&grid->tp_fixed, &grid->pp_fixed, &grid->cp_fixed, &grid->vpp_fixed};
  if (it - keys.begin() < 4) *fixed[it - keys.begin()] = true;
  return true;
}

namespace {

// (ep, etp) pairs for one dense plan of an MoE grid that the loader's expert rules allow
// (scenarios/plan_rules.hpp): etp·ep divides fold = tp·cp·dp, etp the expert width, and a derived
// ep the routed experts (a fixed ep that does not stays, for the loader to name).
std::vector<std::pair<int, int>> expert_layouts(const PlanGrid& g, int tp, long fold) {
  std::vector<int> eps = g.ep;
  if (eps.empty()) {
    for (int e = 1; e <= g.experts && e <= fold; e *= 2)
      if (scenarios::ep_refusal(e, g.experts).empty()) eps.push_back(e);
    if (g.experts <= fold && (eps.empty() || eps.back() != g.experts)) eps.push_back(g.experts);
  }
  std::vector<int> etps = g.etp.empty() ? std::vector<int>{1, tp} : g.etp;
  std::vector<std::pair<int, int>> out;
  for (int ep : eps)
    for (std::size_t i = 0; i < etps.size(); ++i) {
      const int etp = etps[i];
      if (i > 0 && etp == etps[0]) continue;  // tp = 1: {1, 1}
      if (!scenarios::expert_fold_refusal(ep, etp, fold).empty()) continue;
      if (g.expert_ffn_hidden > 0 && !scenarios::etp_refusal(etp, g.expert_ffn_hidden).empty()) continue;
      out.emplace_back(ep, etp);
    }
  return out;
}

// Whether grid.model's rules refuse a value of a dimension the user did not fix.
bool refused_tp(const PlanGrid& g, int tp) { return g.model && !g.tp_fixed && !scenarios::tp_refusal(*g.model, tp).empty(); }
bool refused_cp(const PlanGrid& g, int cp) { return g.model && !g.cp_fixed && !scenarios::cp_refusal(*g.model, cp).empty(); }
bool refused_pipeline(const PlanGrid& g, int pp, int vpp) {
  return g.model && !g.pp_fixed && !g.vpp_fixed && !scenarios::pipeline_refusal(*g.model, pp, vpp).empty();
}

}  // namespace

std::vector<std::string> parse_schedules(const std::string& text, const std::string& what) {
  std::vector<std::string> out;
  for (const std::string& name : split(text, ',')) {
    if (std::find(kScheduleNames.begin(), kScheduleNames.end(), name) == kScheduleNames.end())
      throw ScenarioError(fmt::format("{}: unknown schedule '{}'; allowed: {} (comma-separated)", what, name,
                                      fmt::join(kScheduleNames, ", ")));
    if (std::find(out.begin(), out.end(), name) != out.end())
      throw ScenarioError(fmt::format("{}: schedule '{}' is listed twice", what, name));
    out.push_back(name);
  }
  return out;
}

namespace {

// The schedules a plan of this pp and vpp runs under: none of the grid's (a pp 1 plan runs 1f1b),
// interleaved at vpp > 1, the V-shaped ones (dualpipev, zbv) at vpp 2, the grid's others at vpp
// 1 — in kScheduleNames order.
std::vector<std::string> plan_schedules(const PlanGrid& g, int pp, int vpp) {
  if (pp == 1) return {"1f1b"};
  std::vector<std::string> out;
  for (const auto& name : kScheduleNames) {
    if (std::find(g.schedules.begin(), g.schedules.end(), name) == g.schedules.end()) continue;
    const bool v_shape = name == "dualpipev" || name == "zbv";
    if (v_shape ? vpp == 2 : (name == "interleaved") == (vpp > 1)) out.push_back(name);
  }
  return out;
}

}  // namespace

std::vector<int> vpp_values(int layers, int pp, int max_vpp) {
  std::vector<int> out{1};
  for (int v = 2; v <= max_vpp && long(pp) * v <= layers; ++v)
    if (layers % (pp * v) == 0 || (layers + 2) % (pp * v) == 0) out.push_back(v);
  return out;
}

std::vector<PlanPoint> auto_parallel_points(int gpus, const PlanGrid& g) {
  std::vector<PlanPoint> plans;
  const bool moe = g.experts > 0;
  for (int tp : g.tp)
    for (int pp : g.pp)
      for (int cp : g.cp) {
        const long model_parallel = long(tp) * pp * cp;
        if (model_parallel <= 0 || gpus % model_parallel != 0 || refused_tp(g, tp) || refused_cp(g, cp)) continue;
        const auto experts = moe ? expert_layouts(g, tp, gpus / pp) : std::vector<std::pair<int, int>>{{1, 1}};
        const bool by_layers = g.layers > 0 && !g.vpp_fixed && pp > 1;
        for (const auto& [ep, etp] : experts)
        for (int vpp : by_layers ? vpp_values(g.layers, pp, g.max_vpp) : g.vpp) {
          if ((vpp > 1 && pp == 1) || refused_pipeline(g, pp, vpp)) continue;
          for (const auto& schedule : plan_schedules(g, pp, vpp)) {
            const auto sched = std::uint8_t(std::find(kScheduleNames.begin(), kScheduleNames.end(), schedule) -
                                            kScheduleNames.begin());
            for (int mb : g.micro_batch)
              for (int zero : g.zero_stage)
                for (std::size_t rc = 0; rc < g.recompute.size(); ++rc)
                  plans.push_back({tp, pp, cp, vpp, mb, zero, ep, etp, sched, std::uint8_t(rc)});
          }
        }
      }
  return plans;
}

void add_plan(const PlanPoint& x, const PlanGrid& g, const std::string& origin, const std::string& fixed,
              const std::vector<std::string>& fixed_keys, scenarios::ScenarioPatch* overrides,
              std::vector<std::string>* values) {
  auto add = [&](const char* path, scenarios::PatchValue v) {
    const bool is_fixed = std::find(fixed_keys.begin(), fixed_keys.end(), path) != fixed_keys.end();
    overrides->add({path, std::move(v), is_fixed ? fixed : origin});
  };
  const std::string& schedule = kScheduleNames[x.schedule];
  const std::string& rc = g.recompute[x.recompute];
  add("parallelism.tp", x.tp), add("parallelism.pp", x.pp), add("parallelism.cp", x.cp);
  // Keys issue #3 adds; set only when they matter so that today's loader accepts the plans it
  // can simulate.
  if (x.tp > 1) add("parallelism.sequence_parallel", true);
  if (x.vpp > 1) add("parallelism.vpp", x.vpp);
  add("parallelism.schedule", schedule);
  add("training.micro_batch", x.micro_batch);
  add("parallelism.zero_stage", x.zero);
  add("training.recompute", rc);
  if (g.drop_recompute_modules && rc != "selective") add("training.recompute_modules", scenarios::PatchNull{});
  for (int v : {x.tp, x.pp, x.cp, x.vpp}) values->push_back(std::to_string(v));
  values->push_back(schedule);
  values->push_back(std::to_string(x.micro_batch));
  values->push_back(std::to_string(x.zero));
  values->push_back(rc);
  if (g.experts > 0) {
    add("parallelism.ep", x.ep), add("parallelism.etp", x.etp);
    values->push_back(std::to_string(x.ep));
    values->push_back(std::to_string(x.etp));
  }
}

std::vector<Plan> auto_parallel_plans(int gpus, const PlanGrid& g) {
  std::vector<Plan> plans;
  for (const PlanPoint& x : auto_parallel_points(gpus, g)) {
    Plan& p = plans.emplace_back();
    add_plan(x, g, "", "", {}, &p.overrides, &p.values);
  }
  return plans;
}

SweepSpace::SweepSpace(std::vector<Axis> axes, bool auto_parallel, std::vector<std::string> fixed, int base_gpus,
                       PlanGrid grid)
    : axes_(std::move(axes)), auto_parallel_(auto_parallel), base_gpus_(base_gpus) {
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const Axis& a = axes_[i];
    if (a.values.empty()) throw ScenarioError(fmt::format("--vary {}: no values", a.key));
    for (std::size_t j = 0; j < i; ++j)
      if (axes_[j].key == a.key) throw ScenarioError(fmt::format("--vary {}: the key is varied twice", a.key));
    if (auto_parallel && std::find(plan_keys(true).begin(), plan_keys(true).end(), a.key) != plan_keys(true).end())
      throw ScenarioError(fmt::format("--vary {}: --auto-parallel already enumerates this key; fix one value "
                                      "with --set {}=V instead", a.key, a.key));
    if (a.key == "cluster.gpus") gpus_axis_ = int(i);
    auto& typed = axis_values_.emplace_back();
    for (const auto& v : a.values) typed.push_back(scenarios::value_of(v));
    columns_.push_back(a.key);
    if (combos_ > kMaxConfigs / a.values.size()) throw ScenarioError("the sweep has more than 2^62 configurations");
    combos_ *= a.values.size();
  }
  for (auto& f : fixed) {
    const auto eq = f.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ScenarioError(fmt::format("--set {}: expected key.path=value", f));
    const std::string key = f.substr(0, eq), value = f.substr(eq + 1);
    if (value.empty())
      throw ScenarioError(fmt::format("--set {}: empty value; write {}=VALUE (or {}=null to remove the key)", f, key, key));
    for (const auto& a : axes_)
      if (a.key == key) throw ScenarioError(fmt::format("--set {}: the key is also varied (--vary {})", f, key));
    fixed_keys_.push_back(key);
    // ep / etp on a dense model stay overrides, for the loader to reject with its reason.
    const bool expert_key = key == "parallelism.ep" || key == "parallelism.etp";
    if (auto_parallel && !(expert_key && grid.experts == 0) && fix_plan_dimension(&grid, key, value)) continue;
    if (key == "cluster.gpus") {
      const auto v = to_number(value);
      if (!v || !is_whole(*v) || *v < 1) throw ScenarioError(fmt::format("--set {}: not a GPU count", f));
      base_gpus_ = int(*v);
    }
    fixed_.add(scenarios::PatchEntry{key, scenarios::value_of(value), origins_.fixed});
  }
  if (!auto_parallel_) {
    size_ = combos_;
    return;
  }
  for (const auto& k : plan_keys(grid.experts > 0)) columns_.push_back(k);
  std::vector<int> gpu_counts;
  if (gpus_axis_ < 0) {
    gpu_counts.push_back(base_gpus_);
  } else {
    for (const auto& v : axes_[std::size_t(gpus_axis_)].values) {
      const auto n = to_number(v);
      if (!n || !is_whole(*n) || *n < 1 || *n > 1e8)
        throw ScenarioError(fmt::format("--vary cluster.gpus: '{}' is not a GPU count", v));
      gpu_counts.push_back(int(*n));
    }
  }
  grid_ = grid;
  for (int g : gpu_counts)
    if (!plans_.count(g)) plans_.emplace(g, auto_parallel_points(g, grid));
  if (combos_ > 50'000'000)
    throw ScenarioError(fmt::format("--auto-parallel over {} combinations of --vary values; at most 5e7", combos_));
  first_of_combo_.reserve(std::size_t(combos_) + 1);
  std::uint64_t total = 0;
  for (std::uint64_t c = 0; c < combos_; ++c) {
    first_of_combo_.push_back(total);
    total += plans_.at(gpus_of(combo_digits(c))).size();
  }
  first_of_combo_.push_back(total);
  size_ = total;
}

std::vector<std::size_t> SweepSpace::combo_digits(std::uint64_t combo) const {
  std::vector<std::size_t> digits(axes_.size());
  for (std::size_t i = axes_.size(); i-- > 0;) {
    digits[i] = std::size_t(combo % axes_[i].values.size());
    combo /= axes_[i].values.size();
  }
  return digits;
}

int SweepSpace::gpus_of(const std::vector<std::size_t>& digits) const {
  if (gpus_axis_ < 0) return base_gpus_;
  const auto& axis = axes_[std::size_t(gpus_axis_)];
  return int(*to_number(axis.values[digits[std::size_t(gpus_axis_)]]));
}

long long config_integer(const Config& config, const std::string& path) {
  const scenarios::PatchValue* v = config.overrides.find(path);
  if (!v || !std::holds_alternative<long long>(*v))
    throw std::logic_error(fmt::format("configuration {} sets no whole number at {}", config.index, path));
  return std::get<long long>(*v);
}

Config SweepSpace::at(std::uint64_t index) const {
  Config c;
  c.index = index;
  std::uint64_t combo = index;
  std::uint64_t plan = 0;
  if (auto_parallel_) {
    const auto it = std::upper_bound(first_of_combo_.begin(), first_of_combo_.end(), index);
    combo = std::uint64_t(it - first_of_combo_.begin()) - 1;
    plan = index - first_of_combo_[std::size_t(combo)];
  }
  const auto digits = combo_digits(combo);
  // Each override names the flag its value came from; a plan key the user fixed, that flag.
  for (const auto& e : fixed_.entries()) c.overrides.add({e.path, e.value, origins_.fixed});
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    c.overrides.add({axes_[i].key, axis_values_[i][digits[i]], origins_.axis});
    c.values.push_back(axes_[i].values[digits[i]]);
  }
  if (auto_parallel_) {
    const PlanPoint& p = plans_.at(gpus_of(digits))[std::size_t(plan)];
    add_plan(p, grid_, origins_.grid, origins_.fixed, fixed_keys_, &c.overrides, &c.values);
  }
  return c;
}

std::string zero_twin_key(const Config& config, std::initializer_list<const char*> twins, const std::string& stage_as) {
  const std::string zero = "parallelism.zero_stage=";
  std::string k;
  bool set = false;
  for (const std::string& a : config.overrides.assignments()) {
    if (a.rfind(zero, 0) == 0) {
      const std::string stage = a.substr(zero.size());
      if (std::none_of(twins.begin(), twins.end(), [&](const char* t) { return stage == t; })) return "";
      set = true;
      k += zero + stage_as;
    } else {
      k += a;
    }
    k += '\x1f';
  }
  return set ? k : "";
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  auto bad = [&] {
    return ScenarioError(fmt::format("--shard {}: expected i/n with 0 <= i < n, e.g. 0/16 "
                                     "(Slurm: $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT)", text));
  };
  if (slash == std::string::npos) throw bad();
  const auto i = to_number(text.substr(0, slash)), n = to_number(text.substr(slash + 1));
  if (!i || !n || !is_whole(*i) || !is_whole(*n) || *n < 1 || *i < 0 || *i >= *n) throw bad();
  return Shard{std::uint64_t(*i), std::uint64_t(*n)};
}

}  // namespace clustersim::studies
