// The report lists the defaults a run assumed under the heading "set the key to change": every key
// it names must be one `--set` (and a scenario file) accepts, on every shipped scenario. A key the
// loader does not know would send the user to an "unknown key" error.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "scenarios/assumptions.hpp"
#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace {
namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

TEST_CASE("every assumed key the report names is a key --set accepts", "[scenarios][assumptions]") {
  const std::filesystem::path dir = std::filesystem::path(CLUSTERSIM_SOURCE_DIR) / "scenarios";
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  REQUIRE(files.size() >= 5);
  int checked = 0;
  for (const std::string& f : files) {
    const auto listed = scenarios::assumptions(scenarios::simulate(scenarios::load_scenario_file(f)));
    for (const auto& a : listed) {
      INFO(f << ": " << a.key);
      // A value no key takes: the loader must refuse the value, never the key.
      const std::vector<std::string> set = {a.key + "=not_a_value_0"};
      std::string error;
      try {
        (void)scenarios::load_scenario_file(f, set);
      } catch (const scenarios::ScenarioError& e) {
        error = e.what();
      }
      CHECK(error.find("unknown key") == std::string::npos);
      ++checked;
    }
  }
  CHECK(checked > 50);
}

}  // namespace CLUSTERSIM_TEST_ID
}  // namespace
