// A GPU in a machine it does not ship in (issue 31): `run` warns on stderr in one line, exits 0,
// and says the GPU keeps its own profile's clocks and board power.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "scenarios/load.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using clustersim::testing::run_command;

namespace {

const std::string kRun = std::string(CLUSTERSIM_BINARY) + " run " + CLUSTERSIM_SOURCE_DIR + "/scenarios/";

// stderr alone (stdout to /dev/null).
std::string stderr_of(const std::string& args, int* rc) {
  const auto r = run_command(kRun + args + " 2>&1 >/dev/null");
  *rc = r.exit_code;
  return r.out;
}

}  // namespace

TEST_CASE("run warns in one stderr line when the hardware profile and the topology disagree", "[tools][network]") {
  int rc = -1;
  const std::string pcie = stderr_of("7b_256xh100.yaml --set network.topology=h100-pcie-ethernet", &rc);
  CHECK(rc == 0);
  CHECK(std::count(pcie.begin(), pcie.end(), '\n') == 1);
  CHECK(pcie.find("warning: hardware h100-sxm on topology h100-pcie-ethernet: ") == 0);
  CHECK(pcie.find("keeps the h100-sxm profile's clocks and 700 W board power") != std::string::npos);
  CHECK(pcie.find("no hardware profile ships in h100-pcie-ethernet, so the clocks and TDP of the part it holds are not used") !=
        std::string::npos);
  const std::string a100 = stderr_of("175b_1024xa100.yaml --set network.topology=dgx-h100", &rc);
  CHECK(rc == 0);
  CHECK(a100.find("warning: hardware a100-80gb on topology dgx-h100: ") == 0);
  CHECK(a100.find("h100-sxm, h100-sxm-hbm2e-500w, h200-sxm ship in dgx-h100") != std::string::npos);
  // The machines they ship in: no warning.
  CHECK(stderr_of("7b_256xh100.yaml", &rc).empty());
  CHECK(rc == 0);
  CHECK(stderr_of("175b_1024xa100.yaml", &rc).empty());
}

TEST_CASE("the hardware/topology rule is the profile's default_topology against the topology's node", "[scenarios][network]") {
  const std::string dir = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/";
  using clustersim::scenarios::hardware_topology_warning;
  using clustersim::scenarios::load_scenario_file;
  CHECK(hardware_topology_warning(load_scenario_file(dir + "7b_256xh100.yaml")).empty());
  CHECK(hardware_topology_warning(load_scenario_file(dir + "7b_256xh100.yaml", {"network.topology=dgx-h100"})).empty());
  CHECK(!hardware_topology_warning(load_scenario_file(dir + "7b_256xh100.yaml", {"network.topology=dgx-a100"})).empty());
}

}}  // namespace CLUSTERSIM_TEST_ID
