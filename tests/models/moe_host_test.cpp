// The host timeline of an MoE block (models/detail/moe_host.*, models/moe_block_host.cpp) and the
// scenario keys that set its kernel counts and graph capture (scenarios/load_moe.cpp).
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "models/detail/moe_host.hpp"
#include "models/step_program_moe.hpp"
#include "scenarios/error.hpp"
#include "scenarios/simulate.hpp"
#include "support/scenario_fixture.hpp"

namespace { namespace CLUSTERSIM_TEST_ID {

using namespace clustersim;
using models::HostItem;

namespace {

constexpr double kLaunch = 10e-6;

std::vector<HostItem> after_sync(int n, double gpu_each) {
  std::vector<HostItem> v(static_cast<std::size_t>(n), HostItem{1, gpu_each, false});
  v.front().sync = true;
  return v;
}

}  // namespace

TEST_CASE("host timeline: after a sync, tiny kernels cost a launch each", "[models][moe][host]") {
  // The CPU waits for the queue to drain, then issues 50 kernels of 1 us each at 10 us per launch:
  // the GPU waits 10 us for the first and 10 - 1 = 9 us for each of the other 49 (hand count).
  const auto run = models::run_host_timeline(after_sync(50, 1e-6), kLaunch, 5e-3);
  CHECK(run.idle_s == Approx(10e-6 + 49 * 9e-6));
  CHECK(run.lead_s == Approx(1e-6));  // the GPU is always just behind the CPU
  // The same kernels with 5 ms of queued work and no sync: the run-ahead hides every launch.
  auto no_sync = after_sync(50, 1e-6);
  no_sync.front().sync = false;
  CHECK(models::run_host_timeline(no_sync, kLaunch, 5e-3).idle_s == 0.0);
}

TEST_CASE("host timeline: a long GEMM after the sync hides the launches behind it", "[models][moe][host]") {
  // sync, one 1 ms GEMM, then 50 tiny kernels: the CPU issues them in 0.5 ms while the GEMM runs;
  // only the GEMM's own launch is exposed.
  std::vector<HostItem> v{{1, 1e-3, true}};
  for (int i = 0; i < 50; ++i) v.push_back({1, 1e-6, false});
  CHECK(models::run_host_timeline(v, kLaunch, 2e-3).idle_s == Approx(10e-6));
  // Steady state of a block repeated: the tail's run-ahead enters the next block, the sync
  // resets it, so the block pays the same 10 us every time.
  CHECK(models::steady_host_idle(v, kLaunch) == Approx(10e-6));
  // Without a sync only launches beyond the GPU time are exposed: 51 launches (510 us) in 1.05 ms.
  v.front().sync = false;
  CHECK(models::steady_host_idle(v, kLaunch) == 0.0);
  std::vector<HostItem> tiny(100, HostItem{1, 2e-6, false});
  CHECK(models::steady_host_idle(tiny, kLaunch) == Approx(100 * (10e-6 - 2e-6)));
  // A graph replay is one launch for the GPU time of its kernels.
  const HostItem g = models::graph_of(tiny);
  CHECK(g.launches == 1);
  CHECK(g.gpu_s == Approx(100 * 2e-6));
}

TEST_CASE("router kernel counts are the Megatron-LM guide's measured figures", "[models][moe][host]") {
  // Megatron-LM "DeepSeek-V3 on GB200" §2.1.4 and §2.2.1: 72 unfused, 31 with router fusion, 17
  // for the router and preprocess parts with DeepEP's fused preprocess.
  models::TrainingSpec t;
  models::ParallelSpec p;
  p.ep = 32;
  t.moe_router_fusion = false;
  CHECK(models::moe_kernel_counts(t, p, 8).router == 72);
  t.moe_router_fusion = true;
  CHECK(models::moe_kernel_counts(t, p, 8).router == 31);
  t.moe_dispatcher = models::MoeDispatcher::deepep;
  const auto deepep = models::moe_kernel_counts(t, p, 8);
  CHECK(deepep.router + deepep.preprocess == 17);
  // The alltoall dispatcher syncs before its all-to-all with permute fusion, after it (before the
  // second permutation) without (token_dispatcher.py cuda_sync_point).
  t.moe_dispatcher = models::MoeDispatcher::alltoall;
  t.moe_permute_fusion = true;
  CHECK(models::moe_sync_point(t, p, 8) == models::MoeSyncPoint::before_dispatch);
  t.moe_permute_fusion = false;
  CHECK(models::moe_sync_point(t, p, 8) == models::MoeSyncPoint::before_sort);
  CHECK(models::moe_sync_point(t, p, 1) == models::MoeSyncPoint::before_dispatch);
}

namespace {

// A tiny MoE model whose attention, router and preprocess are host-bound before the sync.
double moe_block_forward(const std::string& training) {
  const auto sc = scenarios::load_scenario_string(fmt::format(R"(
model: {{layers: 2, hidden: 256, heads: 4, ffn_hidden: 1024, vocab: 32000, activation: swiglu,
        moe: {{experts: 8, top_k: 2, expert_ffn_hidden: 256}}}}
hardware: h100-sxm
cluster: {{gpus: 2}}
parallelism: {{ep: 2}}
training: {{seq_len: 256, global_batch: 2, micro_batch: 1, moe_load_imbalance: 1.0{}}}
)", training));
  const auto c = scenarios::step_costs_of(sc);
  const auto prog = models::block_program(sc.model, sc.training, sc.parallel, sc.gpu, c, scenarios::network_of(sc));
  double s = 0;
  for (const auto& item : prog.block(1).forward)
    if (!item.comm) s += item.seconds;
  return s;
}

std::string load_error(const std::string& training, const std::string& model = "moe: {experts: 8, top_k: 2, expert_ffn_hidden: 256}") {
  try {
    scenarios::load_scenario_string(fmt::format(R"(
model: {{layers: 2, hidden: 256, heads: 4, ffn_hidden: 1024, vocab: 32000, activation: swiglu{}}}
hardware: h100-sxm
cluster: {{gpus: 2}}
training: {{seq_len: 256, global_batch: 2{}}}
)", model.empty() ? "" : ", " + model, training));
  } catch (const scenarios::ScenarioError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("cuda_graph_scope: captured parts launch as one graph each", "[models][moe][host]") {
  const std::string fused = ", moe_router_fusion: false, moe_permute_fusion: true";
  const double eager = moe_block_forward(fused);
  const double graphs = moe_block_forward(fused + ", cuda_graph_scope: [attn, moe_router, moe_preprocess]");
  const double full = moe_block_forward(fused + ", cuda_graph_scope: [full_iteration]");
  INFO("eager " << eager << " s, partial graphs " << graphs << " s, full iteration " << full << " s");
  // Before the sync the host issues the attention, the router (72 kernels) and the preprocess (11)
  // and permute (2): with the three parts captured they are 3 replays, so at 10 us per launch the
  // pass loses at least the router's 72 - 1 launches less the GPU time they overlapped (< 0.2 ms
  // here), and keeps the routed experts' eager launches after the sync.
  CHECK(eager - graphs > 71 * kLaunch - 0.2e-3);
  CHECK(graphs > full);
  // router fusion alone removes 72 - 31 launches before the sync
  CHECK(eager - moe_block_forward(", moe_router_fusion: true, moe_permute_fusion: true") > 0.0);
}

TEST_CASE("the DeepEP / HybridEP dispatch call costs its measured host time right after the sync",
          "[models][moe][host]") {
  // Megatron-Bridge's Nsight profile (data/validation/moe_host_overhead.csv): 1.767 s of dispatch
  // NVTX per step over 64 x 48 calls on a DGX H100 (13.48 us per plain op): 42.7 plain ops.
  models::TrainingSpec t;
  models::ParallelSpec p;
  p.ep = 16;
  t.moe_dispatcher = models::MoeDispatcher::deepep;
  const auto k = models::moe_kernel_counts(t, p, 8);
  CHECK(k.dispatch_units * 13.48e-6 == Approx(1.767 / (64 * 48)));
  // The alltoall dispatcher's call is taken as HybridEP's, the allgather one's two collectives as
  // one op each; without EP there is no call.
  t.moe_dispatcher = models::MoeDispatcher::alltoall;
  CHECK(models::moe_kernel_counts(t, p, 8).dispatch_units == k.dispatch_units);
  t.moe_dispatcher = models::MoeDispatcher::allgather;
  CHECK(models::moe_kernel_counts(t, p, 8).dispatch_units == 2);
  p.ep = 1;
  CHECK(models::moe_kernel_counts(t, p, 8).dispatch_units == 0);
  // In a block the call sits right after the sync, with the GPU drained: its host time is GPU
  // idle, on top of the two launches the call was costed at before. ep 2 in one node: the exchange
  // is short, so nothing else hides the call.
  const std::string deepep = ", moe_dispatcher: deepep, moe_router_fusion: true, moe_permute_fusion: true";
  const double with_call = moe_block_forward(deepep);
  const double with_graphs = moe_block_forward(deepep + ", cuda_graph_scope: [full_iteration]");
  INFO("eager " << with_call << " s, full-iteration graphs " << with_graphs << " s");
  CHECK(with_call - with_graphs > (k.dispatch_units - 2) * 13.48e-6);
}

TEST_CASE("MoE host keys: bad input is a one-line error naming the key", "[models][moe][host][scenarios]") {
  using Catch::Contains;
  CHECK_THAT(load_error(", cuda_graph_scope: [attn, moe_routr]"),
             Contains("training.cuda_graph_scope") && Contains("did you mean 'moe_router'") && Contains("allowed: attn"));
  CHECK_THAT(load_error(", cuda_graph_scope: [moe_preprocess]"), Contains("must be used with 'moe_router'"));
  CHECK_THAT(load_error(", cuda_graph_scope: [full_iteration, attn]"), Contains("list it alone"));
  CHECK_THAT(load_error(", cuda_graphs: true, cuda_graph_scope: [attn]"), Contains("contradicts"));
  CHECK_THAT(load_error(", cuda_graph_scope: [moe]"), Contains("not modelled"));
  CHECK_THAT(load_error(", cuda_graph_scope: attn"), Contains("expected a list"));
  CHECK_THAT(load_error(", cuda_graph_scope: [moe_router]", ""), Contains("needs an MoE model"));
  CHECK_THAT(load_error(", moe_router_fusion: true", ""), Contains("training.moe_router_fusion") && Contains("dense model"));
  CHECK_THAT(load_error(", moe_permute_fusion: maybe"), Contains("training.moe_permute_fusion"));
  for (const std::string& e : {load_error(", cuda_graph_scope: [moe_preprocess]"), load_error(", cuda_graph_scope: [moe]")})
    CHECK(e.find('\n') == std::string::npos);
  CHECK(load_error(", cuda_graph_scope: [attn, moe_router, moe_preprocess], moe_router_fusion: true").empty());
  CHECK(load_error(", cuda_graph_scope: [attn, mlp]", "").empty());
  // moe_dispatcher_sms: DeepEP / HybridEP only, 1 to the GPU's SMs less one (h100-sxm: 132)
  CHECK_THAT(load_error(", moe_dispatcher_sms: 32"),
             Contains("training.moe_dispatcher_sms") && Contains("comm_sms (16)"));
  CHECK_THAT(load_error(", moe_dispatcher: deepep, moe_dispatcher_sms: 132"), Contains("training.moe_dispatcher_sms"));
  CHECK_THAT(load_error(", moe_dispatcher: deepep, moe_dispatcher_sms: 0"), Contains("training.moe_dispatcher_sms"));
  CHECK_THAT(load_error(", moe_dispatcher_sms: 20", ""), Contains("dense model"));
  CHECK(load_error(", moe_dispatcher: deepep, moe_dispatcher_sms: 32").empty());
}

TEST_CASE("moe_dispatcher_sms: the SMs DeepEP holds slow the compute its exchanges overlap",
          "[models][moe][scenarios]") {
  // Qwen3-30B-A3B on 16 H100 with EP overlap: each exchange runs beside another micro-batch's
  // compute, which keeps the SMs the kernels leave. More SMs for DeepEP, a longer step; without
  // overlap nothing runs beside the exchanges, and the count moves nothing (DP aside).
  const std::string base = R"(
model: qwen3-30b-a3b
hardware: h100-sxm
cluster: {gpus: 16}
parallelism: {ep: 16}
training: {seq_len: 4096, global_batch: 64, micro_batch: 1, moe_dispatcher: deepep, moe_a2a_overlap: true})";
  auto step = [&](const std::vector<std::string>& sets) { return testing::run_text(base, sets).step_time_s; };
  const double sms16 = step({"training.moe_dispatcher_sms=16"}), sms20 = step({}),
               sms64 = step({"training.moe_dispatcher_sms=64"});
  INFO(sms16 << " s at 16 SMs, " << sms20 << " s at the default 20, " << sms64 << " s at 64");
  CHECK(sms16 < sms20);
  CHECK(sms20 < sms64);
  const double off16 = step({"training.moe_a2a_overlap=false", "training.moe_dispatcher_sms=16"});
  const double off64 = step({"training.moe_a2a_overlap=false", "training.moe_dispatcher_sms=64"});
  CHECK(off64 / off16 < 1.01);
  CHECK(sms64 / sms16 > off64 / off16);
}
}}  // namespace CLUSTERSIM_TEST_ID
