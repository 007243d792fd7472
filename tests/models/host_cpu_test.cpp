// The host CPU of the node issues PyTorch's ops: an eager MoE layer, whose many small kernels
// outrun their launches, is host-bound, and GB200's Grace takes 2.75x the time of a DGX's Xeon per
// op (hardware/kernels/host_op_cost.csv, TransformerEngine #2053). The same GPU die runs faster
// in GB200 (1,200 W), so a run replayed from CUDA graphs, which launches a graph per step, must
// not be slowed by the host.
#include <catch2/catch.hpp>

#include <string>

#include "scenarios/error.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

const char* kEagerQwen30b = R"(name: Qwen3-30B-A3B, 8 GPUs, eager Megatron-Core defaults
model: qwen3-30b-a3b
hardware: b200
cluster: {gpus: 8}
parallelism: {tp: 1, pp: 1, ep: 8, zero_stage: 1}
training:
  seq_len: 4096
  global_batch: 256
  micro_batch: 1
  precision: bf16
  recompute: none
  moe_dispatcher: alltoall
  moe_load_imbalance: 1.0
)";

double step_s(const std::string& hardware, std::vector<std::string> sets = {}) {
  sets.push_back("hardware=" + hardware);
  return testing::run_text(kEagerQwen30b, sets).step_time_s;
}

}  // namespace

TEST_CASE("a Grace host slows an eager host-bound MoE step, and CUDA graphs take the host out", "[models][host]") {
  const double b200 = step_s("b200"), gb200 = step_s("gb200");
  INFO("eager step: b200 " << b200 << " s, gb200 " << gb200 << " s");
  CHECK(gb200 > 1.5 * b200);
  const std::vector<std::string> graphs = {"training.cuda_graph_scope=[full_iteration]"};
  const double b200_graphs = step_s("b200", graphs), gb200_graphs = step_s("gb200", graphs);
  INFO("full-iteration graphs: b200 " << b200_graphs << " s, gb200 " << gb200_graphs << " s");
  CHECK(gb200_graphs < b200_graphs);
  CHECK(b200_graphs < b200);
}

TEST_CASE("a hardware host_launch outside its range is refused, naming the key", "[models][host]") {
  std::string y = kEagerQwen30b;
  y.replace(y.find("hardware: b200"), 14, "hardware: {base: gb200, host_launch: 0 us}");
  CHECK_THROWS_WITH(testing::run_text(y), Catch::Contains("hardware.host_launch"));
}

}}  // namespace CLUSTERSIM_TEST_ID
