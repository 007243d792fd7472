// training.activation_offload_layers (Megatron-Core --cpu-offloading-num-layers): the loader's
// rules, the activations left in HBM, and the copies over the GPU's host link.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "support/scenario_fixture.hpp"
#include "topologies/network.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using Catch::Matchers::Contains;

namespace {

// Llama-3 70B on 64 GPUs with FSDP and no recompute: the layout of Megatron-Bridge's
// LLAMA3_70B_PRETRAIN_CONFIG_GB200_FP8_CS_V2 (MBS 2, GBS 256, seq 8192).
std::string llama70b(const std::string& hardware, const std::string& training_extra = "") {
  return testing::scenario_text("llama3-70b", hardware, 64, 8192, 256, "  pp: 1\n  zero_stage: 3\n",
                                "  micro_batch: 2\n  precision: bf16\n  recompute: none\n" + training_extra);
}

scenarios::Report run(const std::string& hardware, int offloaded) {
  return testing::run_text(llama70b(hardware), {"training.activation_offload_layers=" + std::to_string(offloaded)});
}

}  // namespace

TEST_CASE("activation_offload_layers: Megatron-Core's rules, one-line errors", "[models][offload]") {
  const std::string ok = llama70b("gb200", "  activation_offload_layers: 40\n");
  CHECK(testing::load_error_of(ok).empty());
  CHECK_THAT(testing::load_error_of(llama70b("gb200", "  activation_offload_layers: 80\n")),
             Contains("training.activation_offload_layers") && Contains("79"));  // at most layers - 1
  CHECK_THAT(testing::load_error_of(llama70b("gb200", "  activation_offload_layers: -1\n")),
             Contains("training.activation_offload_layers"));
  const std::string pp2 = testing::scenario_text("llama3-70b", "gb200", 64, 8192, 256, "  pp: 2\n",
                                                 "  activation_offload_layers: 4\n");
  CHECK_THAT(testing::load_error_of(pp2), Contains("activation_offload_layers") && Contains("parallelism.pp: 1"));
  CHECK_THAT(testing::load_error_of(llama70b("gb200", "  activation_offload_layers: 4\n  cuda_graphs: true\n")),
             Contains("CUDA graphs"));
  const std::string selective = testing::scenario_text("llama3-70b", "gb200", 64, 8192, 256, "  zero_stage: 3\n",
                                                       "  recompute: selective\n  activation_offload_layers: 4\n");
  CHECK_THAT(testing::load_error_of(selective), Contains("recompute: none"));
}

TEST_CASE("activation offload: offloaded blocks leave HBM, one copy in flight", "[models][offload]") {
  const auto none = run("gb200", 0), forty = run("gb200", 40), most = run("gb200", 79);
  const double block = forty.memory.block_saved_bytes;
  REQUIRE(block > 1e9);  // a 70B block at 2 x 8192 tokens keeps GBs (3.6 GiB in FP8, more in BF16)
  // 40 of 80 blocks go, one is still being copied: 39 blocks fewer in HBM; nothing else moves.
  CHECK(none.memory.activations_bytes - forty.memory.activations_bytes == Approx(39 * block).epsilon(1e-9));
  CHECK(forty.memory.weights_bytes == none.memory.weights_bytes);
  CHECK(!none.memory.fits());  // the plan Megatron-Bridge runs only with offloading
  CHECK(most.memory.fits());
}

TEST_CASE("activation offload: the host link sets the exposed copy time", "[models][offload]") {
  // The same BF16 job on GB200 (Grace's NVLink-C2C, 225 GB/s per GPU per direction) and on DGX
  // B200 (PCIe Gen5 x16, 63 GB/s): a block's copy (4.5 GB, 23 ms on C2C) hides behind the next
  // block's forward (about 24 ms) on C2C; on PCIe (81 ms) most of it is exposed.
  const double gb0 = run("gb200", 0).step_time_s, gb40 = run("gb200", 40).step_time_s;
  const double b0 = run("b200", 0).step_time_s, b40 = run("b200", 40).step_time_s;
  CHECK(gb40 == Approx(gb0).epsilon(1e-3));
  CHECK(b40 > 1.3 * b0);
  // The exposed time on PCIe is at most the copies themselves: 40 blocks x 2 micro-batches x
  // (D2H + H2D) of block_saved_bytes at 63 x 0.88 GB/s.
  const double block = run("b200", 40).memory.block_saved_bytes;
  CHECK(b40 - b0 <= 40 * 2 * 2 * block / (63e9 * 0.88) * 1.0001);
  // More offloaded blocks never make the step faster.
  CHECK(run("gb200", 79).step_time_s >= gb40);
}

}}  // namespace CLUSTERSIM_TEST_ID
