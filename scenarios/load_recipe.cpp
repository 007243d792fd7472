#include "scenarios/load_recipe.hpp"

#include <fmt/format.h>

#include <cctype>
#include <string_view>

#include "hardware/kernel_cost.hpp"

namespace clustersim::scenarios {
namespace {

using hardware::AttentionImpl;
using hardware::Precision;

std::vector<std::string> names_of_impls() {
  return {hardware::kAttentionImplNames.begin(), hardware::kAttentionImplNames.end()};
}

// A key that only means something in low precision: refused otherwise, naming what it does.
void require_low_precision(const YamlReader& tr, const char* key, Precision p, std::string_view what = {}) {
  if (hardware::is_low_precision(p)) return;
  tr.fail(key, fmt::format("needs training.precision fp8, mxfp8 or nvfp4 (got {}){}{}", hardware::name(p),
                           what.empty() ? "" : ": ", what));
}

bool materializes_scores(AttentionImpl a) { return a == AttentionImpl::unfused || a == AttentionImpl::sdpa_math; }

// Architecture from the Tensor Cores a profile lists: FP8 from Hopper (sm_90) on, MX block
// scaling (mxfp8) from Blackwell (sm_100) on, BF16 from Ampere (sm_80) on.
bool blackwell(const hardware::GpuSpec& g) { return g.peak(Precision::mxfp8).si() > 0; }
bool hopper(const hardware::GpuSpec& g) { return g.peak(Precision::fp8).si() > 0 && !blackwell(g); }
bool ampere_or_later(const hardware::GpuSpec& g) { return g.peak(Precision::bf16).si() > 0; }

// Why `impl` cannot run on `gpu`, or "" (FlashAttention READMEs: FA2 needs Ampere or later, FA3
// is for Hopper, FA4 (CuTe DSL) for Blackwell; cuDNN's fused flash attention needs sm_80+).
std::string impl_unavailable(AttentionImpl a, const hardware::GpuSpec& gpu) {
  switch (a) {
    case AttentionImpl::flash1:
    case AttentionImpl::flash2:
    case AttentionImpl::cudnn:
      return ampere_or_later(gpu) ? "" : "needs an Ampere or later GPU (sm_80+)";
    case AttentionImpl::flash3: return hopper(gpu) ? "" : "FlashAttention-3 runs on Hopper (sm_90) only";
    case AttentionImpl::flash4: return blackwell(gpu) ? "" : "FlashAttention-4 runs on Blackwell (sm_100) only";
    default: return "";
  }
}

void read_attention(const YamlReader& tr, const hardware::GpuSpec& gpu, models::TrainingSpec* t) {
  const bool has_impl = tr.has("attention_impl");
  const bool flash = tr.boolean("flash_attention", true);
  if (has_impl) {
    t->attention_impl = static_cast<AttentionImpl>(tr.choice("attention_impl", names_of_impls(), 0));
    t->assumed.attention_impl = false;
    if (tr.has("flash_attention") && flash == materializes_scores(t->attention_impl))
      tr.fail("flash_attention", fmt::format("flash_attention: {} contradicts attention_impl: {}; give one of them",
                                             flash ? "true" : "false", hardware::name(t->attention_impl)));
  } else if (!flash) {
    t->attention_impl = AttentionImpl::unfused;  // the documented synonym
    t->assumed.attention_impl = false;
  } else {
    t->attention_impl = hardware::default_attention_impl(gpu);
  }
  // An explicit choice must exist on the GPU; the profile's default is the profile's claim
  // (hardware/profiles say which kernel and why).
  const std::string why = impl_unavailable(t->attention_impl, gpu);
  if (!why.empty() && has_impl)
    tr.fail("attention_impl", fmt::format("{} on {}: {}", hardware::name(t->attention_impl), gpu.name, why));
  t->flash_attention = !materializes_scores(t->attention_impl);

  t->fp8_attention = tr.boolean("fp8_attention", false);
  if (t->fp8_attention) require_low_precision(tr, "fp8_attention", t->precision);
  // FP8 attention kernels with published rows: cuDNN (H200, B200, GB200, GB300) and the FA3
  // paper's FP8 forward (reference/kernels/kernel_attention.csv).
  if (t->fp8_attention && t->attention_impl != AttentionImpl::cudnn && t->attention_impl != AttentionImpl::flash3)
    tr.fail("fp8_attention", fmt::format("no FP8 kernel for attention_impl: {}; allowed: cudnn, flash3",
                                         hardware::name(t->attention_impl)));
}

void read_low_precision(const YamlReader& tr, models::TrainingSpec* t) {
  const bool fp8 = t->precision == Precision::fp8;
  if (tr.has("fp8_recipe")) {
    if (!fp8)
      tr.fail("fp8_recipe", fmt::format("applies to precision: fp8 only (got {}; mxfp8 and nvfp4 are block-scaled "
                                        "recipes of their own)", hardware::name(t->precision)));
    t->fp8_recipe = static_cast<models::Fp8Recipe>(
        tr.choice("fp8_recipe", {std::begin(models::kFp8RecipeNames), std::end(models::kFp8RecipeNames)}, 1));
    t->assumed.fp8_recipe = false;
  }
  // Default: delayed scaling, Megatron-LM's --fp8-recipe default (arguments.py) and TE's
  // DelayedScaling.
  if (tr.has("fp8_auto_filter")) {
    t->fp8_auto_filter = tr.boolean("fp8_auto_filter", false);
    t->assumed.fp8_auto_filter = false;
    if (t->fp8_auto_filter) require_low_precision(tr, "fp8_auto_filter", t->precision);
  }
  // What a low-precision linear keeps of its input for wgrad: Transformer Engine the quantized
  // copy, torchao Float8Linear the BF16 one (matmul_with_hp_or_float8_args saves input_hp). The
  // default follows the recipe's stack: rowwise scaling and the auto-filter are torchao's.
  t->fp8_saves_quantized_inputs = !(t->fp8_auto_filter || (fp8 && t->fp8_recipe == models::Fp8Recipe::rowwise));
  if (tr.has("fp8_saved_inputs")) {
    require_low_precision(tr, "fp8_saved_inputs", t->precision);
    t->fp8_saves_quantized_inputs = tr.choice("fp8_saved_inputs", {"quantized", "bf16"}, 0) == 0;
  }
}

}  // namespace

std::string upper_name(hardware::Precision p) {
  std::string n = hardware::name(p);
  for (char& c : n) c = char(std::toupper(static_cast<unsigned char>(c)));
  return n;
}

std::string precisions_of(const hardware::GpuSpec& gpu) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < hardware::kPrecisionNames.size(); ++i)
    if (gpu.peak_flops[i].si() > 0) out.emplace_back(hardware::kPrecisionNames[i]);
  return join(out);
}

void read_recipe_keys(const YamlReader& tr, const hardware::GpuSpec& gpu, models::TrainingSpec* t) {
  read_attention(tr, gpu, t);
  read_low_precision(tr, t);
  if (tr.has("cuda_graphs")) {
    t->cuda_graphs = tr.boolean("cuda_graphs", false);
    t->assumed.cuda_graphs = false;
  }
}

void read_bf16_layers(const YamlReader& tr, const models::ModelSpec& m, const models::ParallelSpec& p,
                      models::TrainingSpec* t) {
  if (!tr.has("bf16_layers")) return;
  require_low_precision(tr, "bf16_layers", t->precision, "it keeps blocks out of the low precision");
  if (t->precision == Precision::fp8 && t->fp8_recipe == models::Fp8Recipe::delayed)
    tr.fail("bf16_layers",
            "does not run with fp8_recipe: delayed (Megatron-Core: \"Delayed scaling does not support "
            "first / last layer in BF16\"); allowed with tensorwise, blockwise, rowwise, mxfp8, nvfp4");
  const YamlReader r = tr.child("bf16_layers");
  r.allow_only({"first", "last"});
  const int most = m.layers / p.pp;  // Megatron's bound: the layers of one pipeline stage
  t->bf16_layers.first = r.integer("first", 0, 0, most);
  t->bf16_layers.last = r.integer("last", 0, 0, most);
}

namespace {

// Why `m` has no module `q` for training.module_precision, or "".
std::string missing_module(const models::ModelSpec& m, models::QuantModule q) {
  switch (q) {
    case models::QuantModule::attention_linears:
      return m.mixer_count(models::Mixer::attention) > 0 ? "" : "the model has no attention layers";
    case models::QuantModule::moe_latent_proj:
      return m.moe.latent_dim > 0 ? "" : "the model has no latent MoE projections (model.moe.latent_dim)";
    case models::QuantModule::mamba_out_proj:
      return m.mamba.enabled() ? "" : "the model has no Mamba layers";
    case models::QuantModule::mtp:
      return m.mtp_layers > 0 ? "" : "the model has no MTP modules (model.mtp_layers)";
  }
  return "";
}

}  // namespace

void read_module_precision(const YamlReader& tr, const models::ModelSpec& m, const hardware::GpuSpec& gpu,
                           models::TrainingSpec* t) {
  if (!tr.has("module_precision")) return;
  require_low_precision(tr, "module_precision", t->precision, "it sets modules apart from the low precision");
  const YamlReader r = tr.child("module_precision");
  r.allow_only(models::names_in(models::kQuantModuleNames));
  static constexpr Precision kAllowed[] = {Precision::bf16, Precision::fp8, Precision::mxfp8, Precision::nvfp4};
  for (const auto& [module, name] : models::kQuantModuleNames) {
    const std::string key(name);
    if (!r.has(key)) continue;
    const Precision p = kAllowed[r.choice(key, {"bf16", "fp8", "mxfp8", "nvfp4"}, 0)];
    if (const std::string why = missing_module(m, module); !why.empty()) r.fail(key, why);
    if (p == Precision::fp8 && t->precision != Precision::fp8)
      r.fail(key,
             fmt::format("fp8 needs training.precision fp8 (its fp8_recipe); here {}", hardware::name(t->precision)));
    if (hardware::is_low_precision(p) && gpu.peak(p).si() <= 0)
      r.fail(key, fmt::format("{} has no {} Tensor Cores; allowed: {}", gpu.name, upper_name(p), precisions_of(gpu)));
    t->module_precision[static_cast<std::size_t>(module)] = p;
  }
}

}  // namespace clustersim::scenarios
