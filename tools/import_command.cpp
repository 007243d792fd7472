#include "tools/import_command.hpp"

#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <sstream>

#include "scenarios/error.hpp"
#include "scenarios/import/importers.hpp"
#include "scenarios/import/megatron_bridge_config.hpp"
#include "scenarios/load.hpp"
#include "scenarios/preset_catalog.hpp"
#include "tools/output_file.hpp"

namespace clustersim::tools {
namespace {

struct ImportArgs {
  std::string format, file, out;
  scenarios::importers::ImportOptions options;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw scenarios::ScenarioError(fmt::format("{}: cannot read the file", path));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int run_import(ImportArgs a) {
  namespace im = scenarios::importers;
  a.options.source = a.file;
  const std::string text = read_text(a.file);
  if (!a.options.recipe.empty() && a.format != "megatron-bridge")
    throw scenarios::ScenarioError(
        fmt::format("--recipe applies to megatron-bridge override files, not to {}", a.format));
  const im::Imported imported = a.format == "megatron"          ? im::import_megatron(text, a.options)
                                : a.format == "megatron-bridge" ? im::import_megatron_bridge(text, a.options)
                                : a.format == "torchtitan"      ? im::import_torchtitan(text, a.options)
                                                                : im::import_hf(text, a.options);
  const std::vector<std::string> header = {
      fmt::format("Imported by `clustersim import {} {}`.", a.format, a.file),
      "Each key's comment says which flag or field gave its value, or whose default it is."};
  const std::string yaml = im::to_yaml(imported, header);
  for (const auto& w : imported.warnings) fmt::print(stderr, "warning: {}\n", w);
  // A launch script or TOML becomes a whole scenario: say now if it does not load as written (a
  // script's default GPU count that cannot form its layout), not at the first `run`. A HF config
  // gives the model section only.
  if (a.format != "hf") {
    try {
      (void)scenarios::load_scenario_string(yaml, a.out.empty() ? "<imported>" : a.out);
    } catch (const scenarios::ScenarioError& e) {
      fmt::print(stderr, "warning: the scenario does not run as imported: {} (give --gpus, or set the key)\n",
                 e.what());
    }
  }
  if (a.out.empty()) fmt::print("{}", yaml);
  else write_file_atomically(a.out, yaml);
  return 0;
}

struct PresetsArgs {
  std::string kind, show;
};

int run_presets(const PresetsArgs& a) {
  if (!a.show.empty()) {
    fmt::print("{}", scenarios::preset_text(a.show));
    return 0;
  }
  std::string kind;
  for (const auto& p : scenarios::list_presets(a.kind)) {
    if (p.kind != kind) fmt::print("{}{}:\n", kind.empty() ? "" : "\n", kind = p.kind);
    fmt::print("  {:<24} {}\n", p.name, p.description);
  }
  return 0;
}

}  // namespace

Subcommand add_import_command(CLI::App& app) {
  auto args = std::make_shared<ImportArgs>();
  auto* c =
      app.add_subcommand("import",
                         "write a scenario from a Megatron-LM launch script, a Megatron-Bridge ConfigContainer YAML, a "
                         "torchtitan TOML or a HF config.json");
  c->add_option("format", args->format, "megatron | megatron-bridge | torchtitan | hf")
      ->required()
      ->check(CLI::IsMember({"megatron", "megatron-bridge", "torchtitan", "hf"}));
  c->add_option("file", args->file,
                "launch script or argument file (megatron), ConfigContainer YAML: run_config.yaml or an override file "
                "(megatron-bridge), job TOML (torchtitan), config.json (hf)")
      ->required();
  c->add_option("-o,--output", args->out, "write the scenario YAML to this file instead of standard output");
  c->add_option("--gpus", args->options.gpus, "total GPUs, when the input does not say")->check(CLI::Range(1, 10000000));
  c->add_option("--gpus-per-node", args->options.gpus_per_node,
                "GPUs per NVLink domain, when it spans several hosts (GB200 NVL72: 72, or the racks' GPUs used)")
      ->check(CLI::Range(1, 100000));
  c->add_option("--hardware", args->options.hardware, "hardware profile name or file (default: h100-sxm, with a warning)");
  c->add_option("--vocab", args->options.vocab, "vocabulary size, when the input only names a tokenizer file")->check(CLI::Range(1, 100000000));
  std::string recipes;
  for (const auto& r : scenarios::importers::mbridge::training_recipes())
    recipes += (recipes.empty() ? "" : ", ") + std::string(r.name);
  c->add_option("--recipe", args->options.recipe,
                "megatron-bridge: the recipe an override file is merged onto (" + recipes + ")");
  return {c, [args] { return run_import(*args); }};
}

Subcommand add_presets_command(CLI::App& app) {
  auto args = std::make_shared<PresetsArgs>();
  auto* c = app.add_subcommand("presets", "list the shipped model presets, hardware profiles and topologies");
  c->add_option("kind", args->kind, "models | hardware | topologies (default: all)")->check(CLI::IsMember({"models", "hardware", "topologies"}));
  auto* show = c->add_subcommand("show", "print one preset's YAML");
  show->add_option("name", args->show, "preset name")->required();
  return {c, [args] { return run_presets(*args); }};
}

}  // namespace clustersim::tools
