// The report's MoE line says where a token's experts land when the dispatcher's bytes follow it
// (DeepEP / HybridEP: one copy per node or rank), and the routing groups that bound it.
#include <catch2/catch.hpp>

#include <string>

#include "reporters/report.hpp"
#include "scenarios/load.hpp"
#include "scenarios/simulate.hpp"

namespace {
namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

std::string text_of(const std::string& file, const std::vector<std::string>& sets = {}) {
  return reporters::format_text(scenarios::simulate(
      scenarios::load_scenario_file(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/" + file, sets)));
}

TEST_CASE("the MoE line says how many nodes or ranks a token's experts reach", "[reporters][moe]") {
  // DeepSeek-V3, EP64 over 8 DGX H100 nodes, DeepEP: node-limited routing keeps a token on 4 nodes.
  CHECK_THAT(
      text_of("deepseek_v3_1024xh100.yaml"),
      Catch::Contains("a token's 8 experts reach 4.0 of 8 nodes (routed within 4 of 8 expert groups), one copy each"));
  // Without the group limit the same token spreads over ~5.3 of them.
  CHECK_THAT(text_of("deepseek_v3_1024xh100.yaml", {"model.moe.router_groups=1", "model.moe.router_group_top_k=1"}),
             Catch::Contains("a token's 8 experts reach 5.3 of 8 nodes, one copy each"));
  // The all-to-all dispatcher sends every copy: no spread to report.
  CHECK_THAT(text_of("gpt_oss_120b_64xh100.yaml"), !Catch::Contains("experts reach"));
}

}  // namespace CLUSTERSIM_TEST_ID
}  // namespace
