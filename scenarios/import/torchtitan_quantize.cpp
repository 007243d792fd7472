// torchtitan's model converters ([model] converters) -> training.precision and its recipe, and the
// job-file keys the importer does not model, each warned with its line. Converter names are those
// torchtitan has registered (torchtitan/components/quantization/{float8,mx}.py over its history):
// "float8" / "mx" (settings in [float8] / [mx]), "quantize.dense.*" / "quantize.moe.*" (Sep 2025), and
// "quantize.linear.*" / "quantize.grouped_mm.*" (from Sep 2025; settings in [quantize.linear.float8] …).
#include <fmt/format.h>

#include <toml++/toml.h>

#include <map>
#include <set>

#include "scenarios/import/importers.hpp"
#include "scenarios/import/torchtitan_toml.hpp"
#include "scenarios/load_model.hpp"

namespace clustersim::scenarios::importers {
namespace {

using fmt::format;

enum class Kind { linear_fp8, linear_mx, grouped_fp8, grouped_mx };

const std::map<std::string, Kind>& converter_kinds() {
  static const std::map<std::string, Kind> k = {
      {"float8", Kind::linear_fp8},  {"quantize.linear.float8", Kind::linear_fp8}, {"quantize.dense.float8", Kind::linear_fp8},
      {"mx", Kind::linear_mx},       {"quantize.linear.mx", Kind::linear_mx},       {"quantize.dense.mx", Kind::linear_mx},
      {"quantize.grouped_mm.float8", Kind::grouped_fp8}, {"quantize.moe.float8", Kind::grouped_fp8},
      {"quantize.grouped_mm.mx", Kind::grouped_mx},      {"quantize.moe.mx", Kind::grouped_mx}};
  return k;
}

std::string where(const std::string& source, const toml::node& n) {
  return format("{}:{}", source, n.source().begin.line);
}

// The first of the sections that holds `key` (a converter's settings under its old or new name).
const toml::node* setting(const toml::table& t, std::initializer_list<const char*> sections, const char* key) {
  for (const char* s : sections) {
    toml::node_view<const toml::node> v{t};
    std::string path = s;
    for (std::size_t a = 0, b; a <= path.size(); a = b + 1) {
      b = path.find('.', a);
      if (b == std::string::npos) b = path.size();
      v = v[path.substr(a, b - a)];
    }
    if (const toml::node* n = v[key].node()) return n;
  }
  return nullptr;
}

void set_fp8(const toml::table& t, const std::string& src, Imported& out, const std::string& origin) {
  const toml::node* r = setting(t, {"quantize.linear.float8", "quantize.dense.float8", "float8"}, "recipe_name");
  const std::string recipe = r ? r->value<std::string>().value_or("tensorwise") : "tensorwise";
  if (recipe != "tensorwise" && recipe != "rowwise")
    out.warn(format("{}: recipe_name = \"{}\": not modelled, costed as rowwise", where(src, *r), recipe));
  out.set("training.precision", "fp8", origin);
  out.set("training.fp8_recipe", recipe == "tensorwise" ? "tensorwise" : "rowwise",
          r ? format("recipe_name = \"{}\" (line {})", recipe, r->source().begin.line) : "torchao default: tensorwise");
  out.set("training.fp8_saved_inputs", "bf16",
          "torchao Float8Linear keeps the BF16 input for wgrad (float8_linear.py matmul_with_hp_or_float8_args saves input_hp)");
}

void set_mx(const toml::table& t, const std::string& src, Imported& out, const std::string& origin) {
  const toml::node* r = setting(t, {"quantize.linear.mx", "quantize.dense.mx", "mx"}, "recipe_name");
  const std::string recipe = r ? r->value<std::string>().value_or("mxfp8_cublas") : "mxfp8_cublas";
  const bool nvfp4 = recipe.rfind("nvfp4", 0) == 0;
  if (recipe.rfind("mxfp8", 0) != 0 && !nvfp4)
    out.warn(format("{}: recipe_name = \"{}\": not modelled, costed as mxfp8", where(src, *r), recipe));
  out.set("training.precision", nvfp4 ? "nvfp4" : "mxfp8",
          origin + (r ? format(", recipe_name = \"{}\"", recipe) : ", torchtitan default recipe mxfp8_cublas"));
}

}  // namespace

// Sets training.precision from the converters (and the legacy enable_float8_linear switches).
void import_torchtitan_precision(const toml::table& t, const std::string& src, Imported& out) {
  const toml::node* linear = nullptr;
  std::optional<Kind> linear_kind, grouped_kind;
  const toml::node* grouped = nullptr;
  if (const auto* conv = t["model"]["converters"].as_array())
    for (const auto& c : *conv) {
      const std::string name = c.value<std::string>().value_or("");
      auto it = converter_kinds().find(name);
      if (it == converter_kinds().end()) {
        out.warn(format("{}: [model] converters: \"{}\" is not a converter torchtitan ships (float8, mx, quantize.linear.float8, "
                        "quantize.linear.mx, quantize.grouped_mm.float8, quantize.grouped_mm.mx): not modelled, ignored", where(src, c), name));
      } else if (it->second == Kind::linear_fp8 || it->second == Kind::linear_mx) {
        linear = &c, linear_kind = it->second;
      } else {
        grouped = &c, grouped_kind = it->second;
      }
    }
  for (const char* sec : {"float8", "training"})
    if (const toml::node* n = t[sec]["enable_float8_linear"].node(); n && n->value<bool>().value_or(false) && !linear)
      linear = n, linear_kind = Kind::linear_fp8;
  if (grouped && !linear)
    out.warn(format("{}: converter \"{}\" quantizes only the MoE expert GEMMs: not modelled (training.precision is every "
                    "GEMM's), costed in bf16", where(src, *grouped), grouped->value<std::string>().value_or("")));
  if (grouped && linear && (*grouped_kind == Kind::grouped_fp8) != (*linear_kind == Kind::linear_fp8))
    out.warn(format("{}: expert GEMMs and other GEMMs in different formats: costed in the format of line {}",
                    where(src, *grouped), linear->source().begin.line));
  const ImportedKey* model = out.find("model");
  if (linear && !grouped && model && model_preset(model->value).is_moe())
    out.warn(format("{}: torchtitan's {} converter leaves the MoE expert GEMMs in bf16 (they are grouped GEMMs, not "
                    "nn.Linear): not modelled, costed in {} like the rest", where(src, *linear), toml_shown(*linear),
                    linear_kind == Kind::linear_fp8 ? "fp8" : "mxfp8"));
  const std::string origin = linear ? format("{} (line {})", toml_shown(*linear), linear->source().begin.line) : "";
  if (linear_kind == Kind::linear_fp8) return set_fp8(t, src, out, "the float8 converter " + origin);
  if (linear_kind == Kind::linear_mx) return set_mx(t, src, out, "the MX converter " + origin);
  const std::string param = t["training"]["mixed_precision_param"].value<std::string>().value_or("bfloat16");
  const toml::node* p = t["training"]["mixed_precision_param"].node();
  out.set("training.precision", param == "float32" ? "fp32" : param == "float16" ? "fp16" : "bf16",
          p ? format("[training] mixed_precision_param = \"{}\"", param) : "torchtitan default: bfloat16 (no quantization converter)");
}

}  // namespace clustersim::scenarios::importers
