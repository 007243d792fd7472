// `validate --scenario` prints a row's scenario patch as YAML for a user to run: for every
// published row (dense and MoE), that YAML loads to the same scenario as the patch itself.
#include <catch2/catch.hpp>

#include <string>

#include "scenarios/error.hpp"
#include "scenarios/load.hpp"
#include "validation/conventions.hpp"
#include "studies/csv_table.hpp"
#include "validation/validation.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

// What a scenario is, as far as the rows set it; "error: ..." when it does not load.
std::string summary(const scenarios::Scenario& s) {
  const auto& p = s.parallel;
  const auto& t = s.training;
  std::string layers;
  for (int l : p.pp_layers) layers += std::to_string(l) + ",";
  return s.name + "|" + s.model.name + "|" + std::to_string(s.model.layers) + "|" + std::to_string(s.model.hidden) + "|" +
         std::to_string(s.model.moe.experts) + "|" + s.gpu.name + "|" + s.network.topology.name + "|" +
         std::to_string(s.network.topology.nic_bandwidth.si()) + "|" + std::to_string(s.cluster.gpus) + "|" +
         std::to_string(p.tp) + std::to_string(p.pp) + std::to_string(p.cp) + std::to_string(p.dp) + std::to_string(p.ep) +
         std::to_string(p.etp) + std::to_string(p.vpp) + std::to_string(p.zero_stage) + layers + "|" +
         std::to_string(t.micro_batch) + "|" + std::to_string(int(t.precision)) + std::to_string(int(t.recompute)) + "|" +
         std::to_string(t.recompute_layers) + "|" + std::to_string(t.recompute_modules) + "|" +
         std::to_string(int(s.network.placement[0])) + std::to_string(int(s.network.placement[3])) + "|" +
         std::to_string(t.cuda_graph_scope) + std::to_string(t.moe_router_fusion) + std::to_string(s.model.mla.kv_lora_rank);
}

template <class Load>
std::string loaded(Load load) {
  try {
    return summary(load());
  } catch (const scenarios::ScenarioError& e) {
    const std::string what = e.what();  // without the location: the YAML has lines, the patch none
    return "error: " + what.substr(what.find(": ") + 2);
  }
}

}  // namespace

TEST_CASE("every row's scenario YAML loads as its patch does", "[validation][patch]") {
  int rows = 0;
  for (const char* text : {studies::published_csv_text(), studies::published_moe_csv_text()}) {
    for (const auto& row : studies::parse_csv(text, "published").rows) {
      const studies::RowScenario rs = studies::row_scenario(row);
      if (!rs.reason.empty()) continue;
      const std::string yaml = rs.scenario.yaml();
      INFO(row.at("id") << "\n" << yaml);
      CHECK(loaded([&] { return scenarios::load_scenario(rs.scenario, "row"); }) ==
            loaded([&] { return scenarios::load_scenario_string(yaml, "row"); }));
      ++rows;
    }
  }
  CHECK(rows > 300);
}

}}  // namespace CLUSTERSIM_TEST_ID
