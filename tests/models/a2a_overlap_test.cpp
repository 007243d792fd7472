// moe_a2a_overlap as Megatron-Core schedules it (models/step_program_moe.cpp exchange_cover): each
// exchange hides only behind its partner piece of the other micro-batch's pass. Small experts and
// a wide hidden size on two DGX H100 nodes (EP16 over InfiniBand) make the forward combine longer
// than the attention backward that covers it, so part of it stays exposed, where the rule before
// (every exchange beside the whole pass) hid all but ~3 % of it.
#include <catch2/catch.hpp>

#include <string>

#include "support/scenario_fixture.hpp"

namespace {
namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;

namespace {

const char* kProbe = R"(name: EP overlap probe
model: {layers: 4, hidden: 4096, heads: 32, kv_heads: 4, ffn_hidden: 8192, vocab: 32000, activation: swiglu,
        moe: {experts: 128, top_k: 8, expert_ffn_hidden: 1024}}
hardware: h100-sxm
cluster: {gpus: 16}
parallelism: {ep: 16}
training: {seq_len: 2048, global_batch: 64, micro_batch: 1, moe_load_imbalance: 1.0, moe_dispatcher: alltoall}
)";

double exposed_ep(bool overlap) {
  const auto r = testing::run_text(kProbe, {std::string("training.moe_a2a_overlap=") + (overlap ? "true" : "false")});
  return r.step.breakdown.comm_exposed[models::Channel::ep];
}

// The step time hidden by the overlap with `m` micro-batches per step (16 GPUs, pp 1: dp 16).
double saved_s(int m) {
  const std::string batch = "training.global_batch=" + std::to_string(16 * m);
  auto step = [&](const char* overlap) { return testing::run_text(kProbe, {batch, overlap}).step.step_time_s; };
  return step("training.moe_a2a_overlap=false") - step("training.moe_a2a_overlap=true");
}

}  // namespace

TEST_CASE("EP all-to-all overlap hides each exchange only behind its partner piece", "[models][moe]") {
  const double off = exposed_ep(false), on = exposed_ep(true);
  INFO("exposed EP: " << off << " s without overlap, " << on << " s with");
  REQUIRE(off > 0);
  CHECK(on > 0.2 * off);  // the exchanges longer than their partners stay partly exposed
  CHECK(on < 0.6 * off);  // the covered shares are hidden
}

// Megatron-Core's combined 1F1B without pipelining (combined_1f1b.py) runs the first forward and
// the last backward alone and pairs every other forward with the previous micro-batch's backward:
// m micro-batches make m − 1 pairs, each hiding the same exchanges.
TEST_CASE("EP all-to-all overlap hides nothing in the passes that run without a partner", "[models][moe]") {
  CHECK(saved_s(1) == Approx(0.0).margin(1e-9));  // one forward, one backward: both alone
  const double two = saved_s(2), four = saved_s(4);
  INFO("saved " << two << " s with 2 micro-batches, " << four << " s with 4");
  REQUIRE(two > 0);
  CHECK(four == Approx(3 * two).epsilon(1e-6));
}

}  // namespace CLUSTERSIM_TEST_ID
}  // namespace
