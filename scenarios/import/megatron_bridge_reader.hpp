#pragma once
// The Megatron-Bridge importer's reader of a ConfigContainer YAML (the recipe's values merged with
// the file, as OmegaConf.merge does) and the translator that turns its fields into Megatron-LM flags;
// megatron_bridge.cpp drives them, megatron_bridge_translate.cpp holds the field-by-field rules.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scenarios/error.hpp"
#include "scenarios/import/flag_map.hpp"
#include "scenarios/import/importers.hpp"
#include "scenarios/import/megatron_bridge_config.hpp"

namespace clustersim::scenarios::importers::mbridge {

using fmt::format;

/// The value as a user reads it: a scalar as written, a list in flow style, a `_target_`/`_name_`
/// mapping (a function, dtype or enum of to_yaml) by its name.
std::string shown(const YAML::Node& n);
/// shown() with YAML's spellings of true, false and null made one, for comparing with a default.
std::string normalized_text(const YAML::Node& n);
/// Equal as text, or as numbers.
bool same_value(const std::string& a, const std::string& b);
/// "a list", "a mapping", "nothing" or "a scalar", for messages.
const char* node_kind(const YAML::Node& n);
/// "model" of "model.num_layers".
std::string section_of(const std::string& path);

// One field of the merged ConfigContainer and where its value came from.
struct Entry {
  YAML::Node value;
  std::string origin;  // for the key's comment: "model.num_layers: 32 (line 12)", "recipe R: model.num_layers 32"
  std::string label;   // for messages: "job.yaml:12: model.num_layers", "recipe R: model.num_layers"
};

class Reader {
 public:
  Reader(const ImportOptions& opt, Imported& out) : opt_(opt), out_(out) {}

  // Reads one document (the recipe's values, then the file) over what is there, as OmegaConf.merge
  // lays a YAML over the recipe's ConfigContainer.
  void read(const YAML::Node& root, bool from_file, const std::string& recipe) {
    for (const auto& kv : root) {
      const std::string section = kv.first.Scalar();
      const YAML::Node& value = kv.second;
      const int line = kv.first.Mark().line + 1;
      auto where = [&](const std::string& path) {
        return from_file ? format("{}:{}: {}", opt_.source, line, path) : format("recipe {}: {}", recipe, path);
      };
      if (is_ignored_section(section)) continue;
      if (!is_read_section(section)) {
        out_.warn(format("{}: not a section of Megatron-Bridge's ConfigContainer, ignored", where(section)));
        continue;
      }
      if (section == "mixed_precision" && (value.IsScalar() || (value.IsMap() && is_recipe_call(value)))) {
        erase_section(section);  // a recipe by name replaces the mixed-precision settings
        put(section, value, from_file, recipe, line);
        precision_recipe_ = shown(value);
        precision_entry_ = entries_.at(section);
        continue;
      }
      if (value.IsNull()) {  // comm_overlap: null, peft: null, an empty section
        if (section == "comm_overlap" || section == "peft" || section == "mixed_precision") {
          erase_section(section);
          if (section == "mixed_precision") precision_recipe_.clear();
          put(section, value, from_file, recipe, line);
        }
        continue;
      }
      if (!value.IsMap())
        throw ScenarioError(format("{}: expected a mapping of its fields, found {} ('{}')", where(section),
                                   node_kind(value), shown(value)));
      // A mapping with `_target_` is a new object (omegaconf_utils._apply_overrides instantiates it): the
      // fields it leaves out take their class defaults, not the recipe's values.
      if (value["_target_"]) {
        erase_section(section);
        if (section == "mixed_precision") precision_recipe_.clear();
      }
      // The section is there (comm_overlap: {…} enables its setup); a mapping over a mixed-precision
      // recipe's name changes some of its fields.
      if (!(section == "mixed_precision" && !precision_recipe_.empty())) put(section, value, from_file, recipe, line);
      for (const auto& f : value) {
        const std::string path = section + "." + f.first.Scalar();
        // Megatron-Bridge's GPT model config (BridgeGPTModelConfig, 2026) nests the TransformerConfig
        // fields under model.transformer; a flat override reaches them by name, so both are read as model.X.
        if (path == "model.transformer" && f.second.IsMap()) {
          nested_model_ = true;
          for (const auto& g : f.second)
            put("model." + g.first.Scalar(), g.second, from_file, recipe, g.first.Mark().line + 1,
                "model.transformer." + g.first.Scalar());
          continue;
        }
        put(path, f.second, from_file, recipe, f.first.Mark().line + 1);
      }
    }
  }

  // The layout a recipe picks for the pipeline it is called with, where the file gives none.
  void apply_recipe_layout(const TrainingRecipe& r) {
    if (r.layouts.empty() || entries_.count("model.pipeline_model_parallel_layout")) return;
    const long long pp = integer("model.pipeline_model_parallel_size").value_or(1);
    const long long vpp = integer("model.virtual_pipeline_model_parallel_size").value_or(1);
    auto it = r.layouts.find({pp, vpp});
    if (it == r.layouts.end()) {
      std::string known;
      for (const auto& [k, v] : r.layouts)
        known += format("{}pp {} vpp {}", known.empty() ? "" : ", ", k.first, k.second);
      throw ScenarioError(
          format("{}: recipe {} picks its pipeline layout from pp and vpp and has none for pp {}, vpp {} "
                 "(it knows {}); give model.pipeline_model_parallel_layout",
                 opt_.source, r.name, pp, vpp, known));
    }
    if (*it->second == '\0') return;
    entries_["model.pipeline_model_parallel_layout"] = {
        YAML::Node(std::string(it->second)),
        format("recipe {}: its model.pipeline_model_parallel_layout for pp {}, vpp {}: {}", r.name, pp, vpp,
               it->second),
        format("recipe {}: model.pipeline_model_parallel_layout", r.name)};
  }

  // mixed_precision: a recipe name sets its fields; a mapping's fields replace those.
  void expand_precision_recipe() {
    if (precision_recipe_.empty()) return;
    const Entry& named = precision_entry_;
    const std::string fields = mixed_precision_recipe(precision_recipe_);
    if (fields.empty())
      throw ScenarioError(format("{}: '{}': not a mixed-precision recipe of Megatron-Bridge; allowed: {}", named.label,
                                 precision_recipe_, mixed_precision_recipe_names()));
    for (const auto& f : YAML::Load(fields)) {
      const std::string path = "mixed_precision." + f.first.Scalar();
      if (entries_.count(path)) continue;  // the file's own mixed_precision field wins
      entries_[path] = {f.second, format("{} ({} {})", named.origin, f.first.Scalar(), shown(f.second)),
                        format("{} {}'s {}", named.label, precision_recipe_, f.first.Scalar())};
    }
  }

  bool has(const std::string& path) const { return entries_.count(path) > 0; }
  bool present(const std::string& path) const {  // there and not null
    auto it = entries_.find(path);
    return it != entries_.end() && it->second.value && !it->second.value.IsNull();
  }
  const Entry* entry(const std::string& path) const {
    auto it = entries_.find(path);
    return it == entries_.end() ? nullptr : &it->second;
  }
  const std::map<std::string, Entry>& entries() const { return entries_; }
  const ImportOptions& options() const { return opt_; }
  /// The model section nests TransformerConfig under model.transformer (GPTModelConfig), whose outer
  /// share_embeddings_and_output_weights defaults to false.
  bool nested_model() const { return nested_model_; }

  std::string origin(const std::string& path) const { return entries_.at(path).origin; }
  std::string label(const std::string& path) const {
    auto it = entries_.find(path);
    return it == entries_.end() ? format("{}: {}", opt_.source, path) : it->second.label;
  }

  // Typed values: nullopt for a field left out or null; a value of the wrong type is an error naming
  // the file, line and field.
  std::optional<std::string> text(const std::string& path) const {
    if (!present(path)) return std::nullopt;
    const YAML::Node& v = entries_.at(path).value;
    if (v.IsSequence())
      throw ScenarioError(format("{}: expected a single value, found a list {}", label(path), shown(v)));
    return shown(v);
  }
  std::optional<long long> integer(const std::string& path) const {
    auto t = text(path);
    if (!t) return std::nullopt;
    char* end = nullptr;
    const long long v = std::strtoll(t->c_str(), &end, 10);
    if (t->empty() || *end != '\0') throw ScenarioError(format("{}: expected an integer, found '{}'", label(path), *t));
    return v;
  }
  long long positive(const std::string& path, long long fallback) const {
    const long long v = integer(path).value_or(fallback);
    if (v < 1) throw ScenarioError(format("{}: expected a positive integer, found {}", label(path), v));
    return v;
  }
  std::optional<double> number(const std::string& path) const {
    auto t = text(path);
    if (!t) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(t->c_str(), &end);
    if (t->empty() || *end != '\0') throw ScenarioError(format("{}: expected a number, found '{}'", label(path), *t));
    return v;
  }
  std::optional<bool> boolean(const std::string& path) const {
    if (!present(path)) return std::nullopt;
    const std::string v = normalized_text(entries_.at(path).value);
    if (v != "true" && v != "false")
      throw ScenarioError(
          format("{}: expected true or false, found '{}'", label(path), shown(entries_.at(path).value)));
    return v == "true";
  }
  std::optional<std::string> choice(const std::string& path, std::initializer_list<const char*> allowed) const {
    auto t = text(path);
    if (!t) return std::nullopt;
    std::string list;
    for (const char* a : allowed) {
      if (*t == a) return t;
      list += (list.empty() ? "" : ", ") + std::string(a);
    }
    throw ScenarioError(format("{}: '{}': expected one of {}", label(path), *t, list));
  }

 private:
  static bool is_recipe_call(const YAML::Node& v) {  // {_target_: …mixed_precision.bf16_mixed, _call_: true}
    if (!v["_target_"] || !v["_target_"].IsScalar()) return false;
    const std::string t = v["_target_"].Scalar();
    return t.find(".mixed_precision.") != std::string::npos && t.substr(t.rfind('.') + 1) != "MixedPrecisionConfig";
  }
  void erase_section(const std::string& section) {
    for (auto it = entries_.begin(); it != entries_.end();)
      it = it->first == section || it->first.rfind(section + ".", 0) == 0 ? entries_.erase(it) : std::next(it);
  }
  void put(const std::string& path, const YAML::Node& v, bool from_file, const std::string& recipe, int line,
           std::string shown_path = "") {
    if (shown_path.empty()) shown_path = path;
    if (from_file)
      entries_[path] = {v, format("{}: {} (line {})", shown_path, shown(v), line),
                        format("{}:{}: {}", opt_.source, line, shown_path)};
    else
      entries_[path] = {v, format("recipe {}: {} {}", recipe, shown_path, shown(v)),
                        format("recipe {}: {}", recipe, shown_path)};
  }

  const ImportOptions& opt_;
  Imported& out_;
  std::map<std::string, Entry> entries_;
  std::string precision_recipe_;
  Entry precision_entry_;
  bool nested_model_ = false;
};

// The translation of the merged fields to Megatron-LM flags.
class Translator {
 public:
  Translator(const Reader& r, FlagMap& f) : r_(r), f_(f) {}

  // Sets `flag` from field `path`: its value (or `value`), origin and label.
  void put(const std::string& flag, const std::string& path, std::optional<std::string> value = std::nullopt) {
    f_.set(flag, value ? *value : r_.text(path).value_or(""), r_.origin(path), r_.label(path));
  }
  void put_default(const std::string& flag, const std::string& value, const std::string& why) {
    f_.set(flag, value, why, format("{} ({})", r_.options().source, why));
  }
  // A boolean flag: on when the field is `when`; when it is not, the field says why the flag is off.
  void put_bool(const std::string& flag, const std::string& path, bool fallback, const std::string& default_why,
                bool when = true) {
    const auto v = r_.boolean(path);
    const bool on = v.value_or(fallback) == when;
    const std::string why = r_.has(path) ? r_.origin(path) : default_why;
    if (on) f_.set(flag, "", why, r_.has(path) ? r_.label(path) : format("{} ({})", r_.options().source, default_why));
    else if (!why.empty()) f_.explain_absent(flag, why);  // else Megatron-LM's default says it
  }
  std::string why(const std::string& path, const std::string& default_why) const {
    return r_.has(path) ? r_.origin(path) : default_why;
  }

 private:
  const Reader& r_;
  FlagMap& f_;
};

}  // namespace clustersim::scenarios::importers::mbridge
