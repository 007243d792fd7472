// The enums' name tables (models/enum_names.hpp): every value named once, every name read back
// by the loader as that value, and an unknown name refused with the table's list.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "models/reliability.hpp"
#include "models/training_spec.hpp"
#include "scenarios/error.hpp"
#include "scenarios/load.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

template <class E, std::size_t N>
void check_table(const models::NameTable<E, N>& table, int values) {
  std::set<int> seen_values;
  std::set<std::string> seen_names;
  for (const auto& n : table) {
    seen_values.insert(static_cast<int>(n.value));
    seen_names.emplace(n.name);
    CHECK(models::value_named(table, n.name) == n.value);
    CHECK(models::name_in(table, n.value) == n.name);
  }
  CHECK(int(seen_values.size()) == values);  // every enumerator, none twice
  CHECK(seen_names.size() == N);
}

const char* kBase = R"(
model: llama3-8b
hardware: h100-sxm
cluster: {gpus: 16}
parallelism: {tp: 2, pp: 2}
training: {seq_len: 4096, global_batch: 64, micro_batch: 1}
)";

}  // namespace

TEST_CASE("enum name tables: each enumerator has one name and reads back", "[models][enums]") {
  check_table(models::kRecomputeNames, 3);
  check_table(models::kFlopsFormulaNames, 2);
  check_table(models::kPipelineScheduleNames, 6);
  check_table(models::kFsdpReshardNames, 3);
  check_table(models::kActivationNames, 4);
  check_table(models::kPositionNames, 3);
  check_table(models::kNormNames, 2);
  check_table(models::kLinearKindNames, 2);
  check_table(models::kCheckpointModeNames, 2);
  check_table(models::kPackingNames, 3);
}

TEST_CASE("enum name tables: the loader reads every schedule and recompute name as its value", "[models][enums]") {
  // The V schedules have checks of their own (tests/models/dualpipev_test.cpp); interleaved needs vpp.
  for (const auto& n : models::kPipelineScheduleNames) {
    if (n.value == models::PipelineSchedule::dualpipev || n.value == models::PipelineSchedule::zbv) continue;
    std::vector<std::string> set{"parallelism.schedule=" + std::string(n.name)};
    if (n.value == models::PipelineSchedule::interleaved) set.push_back("parallelism.vpp=2");
    CHECK(scenarios::load_scenario_string(std::string(kBase), "base", set).parallel.schedule == n.value);
  }
  for (const auto& n : models::kRecomputeNames) {
    const auto sc = scenarios::load_scenario_string(std::string(kBase), "base", {"training.recompute=" + std::string(n.name)});
    CHECK(sc.training.recompute == n.value);
  }
  // The names users write, as Megatron, torchtitan and the docs spell them.
  CHECK(models::value_named(models::kPipelineScheduleNames, "zb-h1") == models::PipelineSchedule::zb_h1);
  CHECK(models::value_named(models::kPipelineScheduleNames, "1f1b") == models::PipelineSchedule::one_f_one_b);
  CHECK(models::value_named(models::kFsdpReshardNames, "auto") == models::FsdpReshard::automatic);
  CHECK(std::string(models::name(models::Recompute::selective)) == "selective");
  CHECK_THROWS_WITH(scenarios::load_scenario_string(std::string(kBase), "base", {"parallelism.schedule=zbh1"}),
                    Catch::Contains("1f1b, gpipe, interleaved, zb-h1, dualpipev, zbv"));
}

}}  // namespace CLUSTERSIM_TEST_ID
