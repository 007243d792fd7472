#include "scenarios/fitted.hpp"

#include <sstream>

#include "hardware/gpu_spec.hpp"
#include "scenarios/load_node.hpp"
#include "scenarios/presets.hpp"
#include "scenarios/yaml_reader.hpp"

namespace clustersim::scenarios {
namespace {

constexpr const char* kFittedFile = "hardware/fitted.yaml";
// The keys a die may hold besides the fitted profile keys.
constexpr const char* kDieRows = "rows";
constexpr const char* kDieProfiles = "profiles";

FittedValue read_value(const YamlReader& parent, const std::string& key) {
  const YamlReader v = parent.child(key);
  v.allow_only({"value", "fit"});
  if (!v.has("value")) v.fail("value", "is required: the value the profile loader uses");
  FittedValue out;
  out.value = v.number("value", 0, 0.05, hardware::kMaxComputeSustainedFraction);
  out.fit = v.number("fit", out.value, 0.05, hardware::kMaxComputeSustainedFraction);
  return out;
}

// Every key of a mapping but `skip`, in file order.
std::vector<std::string> keys_of(const YamlReader& r, const std::vector<std::string>& skip) {
  std::vector<std::string> keys;
  for (const auto& kv : r.node()) {
    const std::string k = kv.first.Scalar();
    bool skipped = false;
    for (const auto& s : skip) skipped = skipped || k == s;
    if (!skipped) keys.push_back(k);
  }
  return keys;
}

std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string d; std::getline(in, d, ',');) {
    d.erase(0, d.find_first_not_of(' '));
    d.erase(d.find_last_not_of(' ') + 1);
    if (!d.empty()) out.push_back(d);
  }
  return out;
}

FittedDie read_die(const YamlReader& d) {
  FittedDie die;
  die.rows = d.integer(kDieRows, 0, 0, 1000000);
  die.profiles = comma_list(d.text(kDieProfiles, ""));
  for (const auto& k : keys_of(d, {kDieRows, kDieProfiles})) die.values[k] = read_value(d, k);
  if (die.values.empty()) d.fail(kDieRows, "the die has no fitted key (e.g. compute_sustained_fraction: {value: 0.97})");
  return die;
}

}  // namespace

FittedTable parse_fitted_yaml(const std::string& text, const std::string& source) {
  const YamlReader r(parse_scenario_yaml(text, source), "", [source](const std::string&) { return source; }, nullptr);
  r.allow_only({"fitted_on", "commit", "source", "mode", "rows", "leave_one_family_out_mape", "holdout_rows",
                "holdout_split_mape", "global", "dies"});
  FittedTable t;
  t.fitted_on = r.text("fitted_on", "");
  t.commit = r.text("commit", "");
  t.source = r.text("source", "");
  t.mode = r.text("mode", "");
  t.rows = r.integer("rows", 0, 0, 1000000);
  t.out_of_sample_mape = r.number("leave_one_family_out_mape", 0, 0, 10);
  t.holdout_rows = r.integer("holdout_rows", 0, 0, 1000000);
  t.holdout_split_mape = r.number("holdout_split_mape", 0, 0, 10);
  const YamlReader g = r.child("global");
  for (const auto& k : keys_of(g, {})) t.global[k] = read_value(g, k);
  const YamlReader dies = r.child("dies");
  for (const auto& name : keys_of(dies, {})) t.dies[name] = read_die(dies.child(name));
  return t;
}

const FittedTable& fitted_table() {
  static const FittedTable table = parse_fitted_yaml(fitted_yaml_text(), kFittedFile);
  return table;
}

std::optional<double> fitted_value(const std::string& die, const std::string& key) {
  const auto& dies = fitted_table().dies;
  const auto d = dies.find(die);
  if (d == dies.end()) return std::nullopt;
  const auto v = d->second.values.find(key);
  if (v == d->second.values.end()) return std::nullopt;
  return v->second.value;
}

std::map<std::string, std::string> shipped_profile_dies() {
  std::map<std::string, std::string> out;
  for (const auto& [name, text] : hardware_preset_texts()) {
    const YAML::Node die = lookup(parse_scenario_yaml(text, "hardware/profiles/" + name + ".yaml"), "die");
    out[name] = die && die.IsScalar() ? die.Scalar() : name;
  }
  return out;
}

}  // namespace clustersim::scenarios
