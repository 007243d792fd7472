#pragma once
// A typed change to a scenario: dotted key paths with typed values, each naming where it came
// from (--set, --vary, --fix, plan, --auto-parallel; "" for keys that are the scenario itself, as
// a validation row's). The loader applies it to the scenario's tree and runs its own checks, so
// a patched value fails with the same one-line error as in a file, naming its origin. Code that
// builds or varies scenarios (validation rows, mfu, sweeps, plan) writes patches, never YAML text.
#include <string>
#include <variant>
#include <vector>

namespace clustersim::scenarios {

/// Removes the key (a user's `key=null`).
struct PatchNull {
  bool operator==(const PatchNull&) const = default;
};
/// A value a user wrote that is neither a scalar nor null (a flow list or mapping in --set): read
/// as YAML when the patch is applied, an edge like a scenario file.
struct PatchYaml {
  std::string text;
  bool operator==(const PatchYaml&) const = default;
};
using PatchScalar = std::variant<long long, double, bool, std::string>;
using PatchList = std::vector<PatchScalar>;
using PatchValue = std::variant<PatchNull, long long, double, bool, std::string, PatchList, PatchYaml>;

struct PatchEntry {
  std::string path;    ///< e.g. "training.micro_batch"
  PatchValue value;
  std::string origin;  ///< the flag errors name ("--set"); "" when the key is part of the scenario
  bool operator==(const PatchEntry&) const = default;
};

class ScenarioPatch {
 public:
  ScenarioPatch() = default;
  /// An empty patch whose set() entries name `origin` in errors (see PatchEntry::origin).
  static ScenarioPatch from(std::string origin) {
    ScenarioPatch p;
    p.origin_ = std::move(origin);
    return p;
  }

  /// Sets `path` to `value` (replacing an entry of the same path in place, else appended).
  ScenarioPatch& set(const std::string& path, PatchValue value);
  ScenarioPatch& set(const std::string& path, int value) { return set(path, PatchValue(static_cast<long long>(value))); }
  ScenarioPatch& set(const std::string& path, long value) { return set(path, PatchValue(static_cast<long long>(value))); }
  ScenarioPatch& set(const std::string& path, const char* value) { return set(path, PatchValue(std::string(value))); }
  ScenarioPatch& set(const std::string& path, double value) { return set(path, PatchValue(value)); }
  ScenarioPatch& set(const std::string& path, bool value) { return set(path, PatchValue(value)); }
  /// Appends `other`'s entries, each keeping its origin; applied after this patch's own.
  ScenarioPatch& append(const ScenarioPatch& other);
  ScenarioPatch& add(PatchEntry entry);
  /// The value at `path`, or nullptr.
  const PatchValue* find(const std::string& path) const;
  const std::vector<PatchEntry>& entries() const { return entries_; }
  /// Each entry as "key.path=value" (to_text), as the CLI's --set writes it.
  std::vector<std::string> assignments() const;
  bool empty() const { return entries_.empty(); }
  const std::string& origin() const { return origin_; }
  bool operator==(const ScenarioPatch&) const = default;

  /// "key.path=value" assignments (the CLI's --set); each value as value_of() reads it. Throws
  /// ScenarioError naming `origin` and the assignment when one has no key or no value.
  static ScenarioPatch parse(const std::vector<std::string>& assignments, const std::string& origin = "--set");
  /// The patch as a scenario file's YAML (block mappings, keys in patch order), for a user to read
  /// or run (`validate --scenario`); loading it gives the same scenario as the patch.
  std::string yaml() const;

 private:
  std::string origin_;
  std::vector<PatchEntry> entries_;
};

/// The typed value of a value a user wrote: a whole number, a real number or a switch when the
/// text is exactly how that value prints (so "1e5" and "08" stay words and read as written),
/// null for null/~, a PatchYaml for anything but plain words and numbers, else a word.
PatchValue value_of(const std::string& text);
/// How a value prints in YAML and in a sweep's columns: 8, 0.5, true, bf16, [1, 2].
std::string to_text(const PatchValue& value);
std::string to_text(const PatchScalar& value);

}  // namespace clustersim::scenarios
