// hardware/fitted.yaml: the profiles' fitted constants by GPU die, read by the profile loader; the
// hand-written profiles keep none (issue 30 item 6).
#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <string>

#include "scenarios/error.hpp"
#include "scenarios/fitted.hpp"
#include "scenarios/load.hpp"
#include "scenarios/presets.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {
scenarios::Scenario on(const std::string& hardware) {
  return scenarios::load_scenario_string("model: llama2-7b\nhardware: " + hardware +
                                         "\ncluster:\n  gpus: 8\ntraining:\n  seq_len: 4096\n  global_batch: 8\n  micro_batch: 1\n"
                                         "  precision: fp16\n");  // fp16: every profile has a peak for it (V100 has no bf16)
}
}  // namespace

TEST_CASE("shipped profiles keep no fitted number, each takes its die's value from hardware/fitted.yaml", "[scenarios][fitted]") {
  const auto dies = scenarios::shipped_profile_dies();
  REQUIRE(dies.size() == scenarios::hardware_preset_texts().size());
  const auto& table = scenarios::fitted_table();
  for (const auto& [profile, die] : dies) {
    INFO(profile << " (die " << die << ")");
    CHECK(!YAML::Load(scenarios::hardware_preset_texts().at(profile))["compute_sustained_fraction"]);
    REQUIRE(table.dies.count(die) == 1);  // calibrate writes every shipped die
    const auto& d = table.dies.at(die);
    CHECK(std::find(d.profiles.begin(), d.profiles.end(), profile) != d.profiles.end());
    const auto value = scenarios::fitted_value(die, "compute_sustained_fraction");
    REQUIRE(value.has_value());
    CHECK(on(profile).gpu.compute_sustained_fraction == *value);
  }
  // One die, one value (issue 31 item 3): H200 and H800 take H100's.
  CHECK(on("h200-sxm").gpu.compute_sustained_fraction == on("h100-sxm").gpu.compute_sustained_fraction);
  // A profile (or an override) that sets the key keeps its own value; an unknown die is unfitted.
  CHECK(on("{base: h100-sxm, compute_sustained_fraction: 0.55}").gpu.compute_sustained_fraction == 0.55);
  CHECK(on("{base: h100-sxm, die: my-die}").gpu.compute_sustained_fraction == 1.0);
  CHECK(!scenarios::fitted_value("no-such-die", "compute_sustained_fraction"));
}

TEST_CASE("a malformed fitted.yaml names the file, line and key", "[scenarios][fitted]") {
  const std::string good =
      "fitted_on: 2030-01-02\ncommit: abc1234\nsource: data/validation/published.csv\nmode: all per profile\n"
      "rows: 12\nleave_one_family_out_mape: 0.1234\nglobal:\n  compute_sustained_fraction: {value: 0.97, fit: 0.9663}\n"
      "dies:\n  gx:\n    rows: 12\n    profiles: a, b\n    compute_sustained_fraction: {value: 0.84, fit: 0.8406}\n";
  const auto t = scenarios::parse_fitted_yaml(good, "f.yaml");
  CHECK(t.rows == 12);
  CHECK(t.commit == "abc1234");
  CHECK(t.out_of_sample_mape == 0.1234);
  CHECK(t.global.at("compute_sustained_fraction").fit == 0.9663);
  CHECK(t.dies.at("gx").values.at("compute_sustained_fraction").value == 0.84);
  CHECK(t.dies.at("gx").profiles == std::vector<std::string>{"a", "b"});
  auto error_of = [](const std::string& text) {
    try {
      scenarios::parse_fitted_yaml(text, "f.yaml");
    } catch (const scenarios::ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error_of(good + "extra: 1\n"), Catch::Contains("f.yaml:14") && Catch::Contains("extra"));
  std::string high = good;
  high.replace(high.find("value: 0.84"), 11, "value: 9.00");
  CHECK_THAT(error_of(high), Catch::Contains("f.yaml:13") && Catch::Contains("dies.gx.compute_sustained_fraction.value"));
  std::string no_value = good;
  no_value.replace(no_value.find("value: 0.84, "), 13, "");
  CHECK_THAT(error_of(no_value), Catch::Contains("value") && Catch::Contains("is required"));
}

}}  // namespace CLUSTERSIM_TEST_ID
