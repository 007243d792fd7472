// The recipe settings of single published rows (data/validation/row_recipes.csv): each names a
// published row, and each reaches that row's scenario after every convention, with its source.
#include <catch2/catch.hpp>

#include <algorithm>

#include "scenarios/load.hpp"
#include "validation/conventions.hpp"
#include "validation/row_recipes.hpp"
#include "validation/validation.hpp"
#include "support/published_rows.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim::studies;

using clustersim::testing::row_with_id;

namespace {

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("row recipes: every line names a published row whose scenario loads", "[validation][recipes]") {
  const CsvTable moe = parse_csv(published_moe_csv_text(), "published_moe.csv");
  const CsvTable dense = parse_csv(published_csv_text(), "published.csv");
  REQUIRE_FALSE(row_recipe_ids().empty());
  for (const std::string& id : row_recipe_ids()) {
    INFO(id);
    const RowScenario rs = row_scenario(row_with_id(id.rfind("MOE-", 0) == 0 ? moe : dense, id));
    REQUIRE(rs.reason.empty());
    CHECK_NOTHROW(clustersim::scenarios::load_scenario(rs.scenario, id));
  }
}

TEST_CASE("row recipes: the Llama 3 70B GB200 FSDP row offloads its recipe's 40 layers", "[validation][recipes]") {
  const CsvTable dense = parse_csv(published_csv_text(), "published.csv");
  const RowScenario rs = row_scenario(row_with_id(dense, "MBRIDGE-007"));
  CHECK(clustersim::scenarios::load_scenario(rs.scenario, "007").training.activation_offload_layers == 40);
  CHECK(mentions(rs.assumptions, "LLAMA3_70B_PRETRAIN_CONFIG_GB200_FP8_CS_V2"));
}

TEST_CASE("row recipes: a row's own recipe overrides its family's convention", "[validation][recipes]") {
  const CsvTable moe = parse_csv(published_moe_csv_text(), "published_moe.csv");
  // The family convention turns TP overlap on; the Qwen3-235B H100 recipe turns it off.
  const RowScenario h100 = row_scenario(row_with_id(moe, "MOE-MBRIDGE-075"));
  const auto sc = clustersim::scenarios::load_scenario(h100.scenario, "075");
  CHECK_FALSE(sc.parallel.tp_comm_overlap);
  CHECK(mentions(h100.assumptions, "qwen3_235b_a22b_pretrain_config_h100"));
  // A row of the same family and GPU the table does not name keeps the convention.
  const RowScenario other = row_scenario(row_with_id(moe, "MOE-MBRIDGE-162"));
  CHECK(clustersim::scenarios::load_scenario(other.scenario, "162").parallel.tp_comm_overlap);
  CHECK_FALSE(mentions(other.assumptions, "the release's recipe"));
}

TEST_CASE("row recipes: the DeepSeek-V3 B200 26.04.01 row runs its recipe's MTP and pipeline layout", "[validation][recipes]") {
  const CsvTable moe = parse_csv(published_moe_csv_text(), "published_moe.csv");
  const RowScenario rs = row_scenario(row_with_id(moe, "MOE-MBRIDGE-060"));
  const auto sc = clustersim::scenarios::load_scenario(rs.scenario, "060");
  CHECK(sc.model.mtp_layers == 1);
  CHECK(sc.training.moe_a2a_overlap);
  REQUIRE(sc.parallel.pp_layers.size() == 16);
  CHECK(sc.parallel.pp_layers.front() == 4);
  CHECK(sc.parallel.pp_layers.back() == 1);
  CHECK(mentions(rs.assumptions, "MTP not stated: 1 module"));  // the recipes' mtp_num_layers=1
  CHECK_FALSE(mentions(rs.assumptions, "no MTP module"));
}

}}  // namespace CLUSTERSIM_TEST_ID
